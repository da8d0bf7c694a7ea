// Remote signals: the Ruby API and the Web UI LPUSH TSTP (quiet!), TERM
// (stop!) or TTIN (dump_threads) onto `<identity>-signals`; each beat pops one
// (RPOP, in the heartbeat's MULTI) and acts on it as Launcher#❤ does:
// `::Process.kill(signal, pid) if signal && !@embedded`.
import { signalsKey } from "../wire/keys.js";

export type RemoteSignal = "TSTP" | "TERM" | "TTIN";
const SIGNALS: readonly string[] = ["TSTP", "TERM", "TTIN"];

/** Where a popped signal goes. */
export interface SignalTarget {
  /** The process whose list it came from. */
  identity: string;
  /** An embedded 7.0.3+ process ignores remote signals. */
  ignore: boolean;
  onSignal: (sig: RemoteSignal) => void;
  warn: (message: string) => void;
}

/** Acts on the reply of the beat's RPOP: nothing when none was waiting; an unknown name is logged and dropped. */
export function actOnRemoteSignal(popped: unknown, to: SignalTarget): void {
  if (typeof popped !== "string" || to.ignore) return;
  if (SIGNALS.includes(popped)) to.onSignal(popped as RemoteSignal);
  else to.warn(`heartbeat: ignoring unknown signal ${JSON.stringify(popped)} from ${signalsKey(to.identity)}`);
}
