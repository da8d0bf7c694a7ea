// The signals a Sidekiq process obeys, from the OS (Sidekiq's CLI) and from
// Redis (the Web UI's Quiet and Stop buttons, read by the heartbeat).
import { constants as osConstants } from "node:os";
import type { Logger } from "../logging/logger.js";
import type { RemoteSignal } from "./heartbeat.js";
import type { StopResult } from "./stop-result.js";

/** Exit codes of a stopped worker process: everything done. */
export const EXIT_STOPPED = 0;
/** Stopped within its deadline, but something could not be done (Redis unreachable): see the log line. */
export const EXIT_INCOMPLETE = 3;

/** What the signals act on. */
export interface Signalled {
  quietDown(): Promise<void>;
  stop(): Promise<StopResult>;
  /** Whether a stop has begun. */
  readonly stopping: boolean;
  dump(): unknown;
  readonly logger: Logger;
}

/**
 * A remote signal from the Web UI: TSTP quiets, TERM stops (as Ruby's
 * Process.kill(signal, pid) when the OS signals are handled, so the CLI then
 * exits as on an OS TERM), TTIN dumps.
 */
export function onRemoteSignal(target: Signalled, sig: RemoteSignal, osSignalsHandled: boolean): void {
  target.logger.info(`Got ${sig} signal`);
  if (sig === "TSTP") void target.quietDown();
  else if (sig === "TERM" && osSignalsHandled) process.kill(process.pid, "SIGTERM");
  else if (sig === "TERM") void target.stop();
  else target.logger.warn("Thread dump", { slots: target.dump() });
}

/**
 * OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump. After
 * a stop, `exit` gets EXIT_STOPPED (0) or EXIT_INCOMPLETE (3, something
 * could not be done); a second TERM or INT exits at once with 128 + the
 * signal's number (143, 130). Returns the function that removes the handlers.
 */
export function handleOsSignals(target: Signalled, exit: (code: number) => void): () => void {
  const stopOn = (sig: "SIGTERM" | "SIGINT") => () => {
    if (target.stopping) {
      target.logger.warn(`Got ${sig.slice(3)} again: exiting now; unfinished jobs stay where recovery finds them`);
      exit(128 + osConstants.signals[sig]);
      return;
    }
    void target.stop().then((r) => exit(r.clean ? EXIT_STOPPED : EXIT_INCOMPLETE));
  };
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ["SIGTERM", stopOn("SIGTERM")],
    ["SIGINT", stopOn("SIGINT")],
    ["SIGTSTP", () => void target.quietDown()],
    ["SIGTTIN", () => target.logger.warn("Thread dump", { slots: target.dump() })],
  ];
  for (const [s, h] of handlers) process.on(s, h);
  return () => {
    for (const [s, h] of handlers) process.off(s, h);
  };
}
