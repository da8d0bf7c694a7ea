// `sidekiq-bridge worker --processes N`: one supervisor forks N full workers.
// Why: a Node worker runs its JavaScript on one core, so a many-core box needs
// several processes, and someone has to forward signals to them and replace
// one that dies (what Sidekiq Enterprise's sidekiqswarm does for Ruby). Each
// child is an ordinary `sidekiq-bridge worker` with its own pid and identity,
// so Sidekiq::ProcessSet and the Web UI list N processes; a dead child's
// in-flight jobs come back through reliable-fetch recovery when its
// replacement starts (its pid is gone on this host).
//
// Rules:
//   TERM / INT    forwarded to every child (a second one too: children then exit
//                 at once); the supervisor exits when all have, with the highest
//                 of their exit codes: the one a child reported over IPC as it
//                 exited, else its own (a child killed by a signal counts as 128 + n).
//   TSTP, TTIN    forwarded (a replacement started after TSTP is quieted too).
//   a child dies  replaced after a backoff of 1 s, doubling to 30 s; a child that
//                 ran 60 s resets it. Five crashes in a row, each within 60 s of its
//                 start, is a crash loop: the supervisor stops the others, exits 1.
//                 A child exiting 0 (Stop from the Web UI) is replaced after 1 s.
//   start fails   a first-generation child that exits before it is running (bad
//                 handler module, Redis unreachable): the others are stopped, exit 1,
//                 as a single worker that cannot start.
// Children run in their own process group, so a terminal's Ctrl-C reaches them
// once, through the supervisor; a child whose supervisor vanishes stops itself.
// Signals go to a child's pid, not through ChildProcess#kill: Deno's closes the
// IPC channel (the child sees `disconnect` as it is signalled) and reports the
// child's own exit(0) as killed by that signal. And the code a child reports
// wins over how the runtime reports its exit, so a stop that ended well is not
// taken for a kill on a runtime that reports it wrong.
import { type ChildProcess, fork } from "node:child_process";
import { constants as osConstants } from "node:os";
import { parseArgs } from "node:util";
import type { Logger } from "../../core/logging/logger.js";
import { integer } from "./command.js";

/** The child's 0-based slot, set in each child's environment (a handlers module may read it). */
export const SWARM_INDEX_ENV = "SIDEKIQ_BRIDGE_SWARM_INDEX";
/** The identity of the dead child a replacement takes over from (its heartbeat is cleared). */
export const SWARM_REPLACES_ENV = "SIDEKIQ_BRIDGE_SWARM_REPLACES";
/** The IPC message a child sends once its worker runs. */
export const READY_MESSAGE = "sidekiq-bridge:ready";
/** The IPC message a child sends with its exit code as its stop ends, just before it exits. */
export const EXIT_MESSAGE = "sidekiq-bridge:exit";

/** `--processes N`: an integer >= 1 (1, the default, runs no supervisor). */
export const PROCESSES_FLAG = {
  value: "N",
  help: "run N worker processes under one supervisor (default 1: just this\nprocess); each child is a full worker with its own identity, a dead\none is replaced; --metrics-port N gives child i the port N + i",
  parse: integer(1),
  default: 1,
} as const;

/** The worker's argv without `--processes N` / `--processes=N`: what each child runs. */
export function childArgv(argv: string[], options: NonNullable<Parameters<typeof parseArgs>[0]>["options"]): string[] {
  const { tokens } = parseArgs({ args: argv, options, strict: false, tokens: true, allowPositionals: true });
  const drop = new Set<number>();
  for (const t of tokens) {
    if (t.kind !== "option" || t.name !== "processes") continue;
    drop.add(t.index);
    if (t.value !== undefined && !t.inlineValue) drop.add(t.index + 1);
  }
  return argv.filter((_, i) => !drop.has(i));
}

export interface RestartRules {
  firstDelayMs: number;
  maxDelayMs: number;
  /** A child that ran this long resets its slot's crash count. */
  healthyAfterMs: number;
  /** Crashes in a row, each within healthyAfterMs of the start, before giving up. */
  maxCrashes: number;
}

export const RESTART_RULES: RestartRules = {
  firstDelayMs: 1000,
  maxDelayMs: 30_000,
  healthyAfterMs: 60_000,
  maxCrashes: 5,
};

/** What to do about one slot's child that exited on its own. */
export type RestartDecision = { restart: true; delayMs: number } | { restart: false };

/** The restart rule of one slot (pure, so it is unit-tested without processes). */
export class SlotRestarts {
  private crashes = 0;
  constructor(private readonly rules: RestartRules = RESTART_RULES) {}

  /** `crashed`: exit code other than 0, or killed by a signal. */
  onExit(crashed: boolean, uptimeMs: number): RestartDecision {
    if (uptimeMs >= this.rules.healthyAfterMs) this.crashes = 0;
    if (!crashed) return { restart: true, delayMs: this.rules.firstDelayMs };
    this.crashes++;
    if (this.crashes >= this.rules.maxCrashes) return { restart: false };
    const delayMs = Math.min(this.rules.firstDelayMs * 2 ** (this.crashes - 1), this.rules.maxDelayMs);
    return { restart: true, delayMs };
  }
}

/** A child's exit as a code: the one it reported, else its own, else 128 + the signal's number. */
export function exitCodeOf(code: number | null, signal: NodeJS.Signals | null, reported?: number): number {
  if (reported !== undefined) return reported;
  if (code !== null) return code;
  return 128 + (signal ? (osConstants.signals[signal] ?? 0) : 0);
}

export interface SwarmOptions {
  processes: number;
  /** The worker command's argv for each child, without --processes. */
  argv: string[];
  logger: Logger;
  /** The CLI script to fork (default: this process's). */
  script?: string;
  rules?: RestartRules;
}

interface Slot {
  index: number;
  child?: ChildProcess;
  startedAt: number;
  ready: boolean;
  identity?: string;
  generation: number;
  restarts: SlotRestarts;
  timer?: NodeJS.Timeout;
}

type Forwarded = "SIGTERM" | "SIGINT" | "SIGTSTP" | "SIGTTIN";

/** Runs the supervisor until every child has exited; resolves with the exit code. */
export function superviseSwarm(o: SwarmOptions): Promise<number> {
  const script = o.script ?? process.argv[1]!;
  const rules = o.rules ?? RESTART_RULES;
  const log = o.logger;
  const slots: Slot[] = Array.from({ length: o.processes }, (_, index) => ({
    index,
    startedAt: 0,
    ready: false,
    generation: 0,
    restarts: new SlotRestarts(rules),
  }));
  let stopping = false;
  let quiet = false;
  let worst = 0;
  // Set when the supervisor gives up (a start failure, a crash loop): the exit code then.
  let failed: number | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((r) => (finish = r));

  const live = () => slots.filter((s) => s.child !== undefined);
  // TSTP and TTIN stop a process that has no handler yet: only running children get them.
  const ready = () => live().filter((s) => s.ready);
  const send = (s: Slot, sig: Forwarded) => {
    const c = s.child;
    // Exited (its close event follows): its pid may be another process's by now.
    if (c?.pid === undefined || c.exitCode !== null || c.signalCode !== null) return;
    try {
      process.kill(c.pid, sig);
    } catch {
      // Already gone: its close event follows.
    }
  };

  const stopAll = (sig: Forwarded, why: string) => {
    if (!stopping) log.info(`${why}: stopping ${live().length} worker processes`);
    stopping = true;
    for (const s of slots) if (s.timer) clearTimeout(s.timer);
    for (const s of live()) send(s, sig);
    if (live().length === 0) finish(failed ?? worst);
  };

  const start = (s: Slot, replaces?: string) => {
    s.timer = undefined;
    if (stopping) return;
    const env: NodeJS.ProcessEnv = { ...process.env, [SWARM_INDEX_ENV]: String(s.index) };
    delete env[SWARM_REPLACES_ENV];
    if (replaces) env[SWARM_REPLACES_ENV] = replaces;
    const child = fork(script, ["worker", ...o.argv], {
      env,
      execArgv: process.execArgv,
      // Own process group: a terminal's signal reaches the children once, via us.
      detached: true,
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    Object.assign(s, { child, startedAt: Date.now(), ready: false, identity: undefined });
    s.generation++;
    const generation = s.generation;
    let reported: number | undefined;
    child.on("message", (m: unknown) => {
      const msg = m as { type?: unknown; identity?: unknown; code?: unknown };
      if (msg?.type === EXIT_MESSAGE && Number.isInteger(msg.code)) reported = msg.code as number;
      if (msg?.type !== READY_MESSAGE) return;
      s.ready = true;
      if (typeof msg.identity === "string") s.identity = msg.identity;
      if (quiet) send(s, "SIGTSTP");
    });
    // On close, not exit: a message sent just before exiting may come after the exit
    // event (Deno), never after close.
    child.on("close", (code, signal) => {
      if (s.child === child) onExit(s, generation, exitCodeOf(code, signal, reported));
    });
    // A fork that failed (EAGAIN, ENOMEM) may emit no close: count it as a child that exited 1.
    child.on("error", (e) => {
      log.error(`worker process ${s.index}: ${e.message}`);
      if (child.pid === undefined && s.child === child) onExit(s, generation, 1);
    });
  };

  const onExit = (s: Slot, generation: number, code: number) => {
    const uptime = Date.now() - s.startedAt;
    const { ready, identity, child } = s;
    s.child = undefined;
    if (stopping) {
      // Only the exits of the stop count: a child replaced earlier does not.
      worst = Math.max(worst, code);
      if (live().length === 0) finish(failed ?? worst);
      return;
    }
    const what = `worker process ${s.index} (pid ${child?.pid})`;
    if (!ready && generation === 1) {
      log.error(`${what} could not start (exit code ${code})`);
      failed = 1;
      stopAll("SIGTERM", "A worker process could not start");
      return;
    }
    const decision = s.restarts.onExit(code !== 0, uptime);
    if (!decision.restart) {
      log.error(
        `${what} crashed ${rules.maxCrashes} times in a row, each within ${rules.healthyAfterMs / 1000} s of its start: not restarting it`,
      );
      failed = 1;
      stopAll("SIGTERM", "Crash loop");
      return;
    }
    log.warn(`${what} exited (code ${code}); starting a new one in ${decision.delayMs / 1000} s`);
    s.timer = setTimeout(() => start(s, identity), decision.delayMs);
  };

  const handlers: Array<[Forwarded, () => void]> = [
    ["SIGTERM", () => stopAll("SIGTERM", "Got TERM")],
    ["SIGINT", () => stopAll("SIGINT", "Got INT")],
    [
      "SIGTSTP",
      () => {
        quiet = true;
        log.info("Got TSTP: quieting every worker process");
        for (const s of ready()) send(s, "SIGTSTP");
      },
    ],
    ["SIGTTIN", () => ready().forEach((s) => send(s, "SIGTTIN"))],
  ];
  for (const [sig, h] of handlers) process.on(sig, h);
  log.info(`sidekiq-bridge swarm (pid ${process.pid}) starting ${o.processes} worker processes`);
  for (const s of slots) start(s);
  return done.finally(() => {
    for (const [sig, h] of handlers) process.off(sig, h);
  });
}
