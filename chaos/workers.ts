// The worker an add-on chaos scenario breaks: Node's CLI worker, or real
// Ruby Sidekiq in its root filesystem running the real gem from
// shared/peers/ruby (on RUBYLIB), so one workload and one count serve both.
// Each gives its output (stdout and log: the lines the scenario counts),
// whether it died on its own, and stops.
import type { SidekiqBackend, SidekiqProcess } from "../harness/backend.js";
import { peersRubyLib } from "../harness/local-backend.js";
import type { SidekiqTarget } from "../harness/versions.js";
import { spawnNodeWorker, stopChild } from "./scenarios.js";

/** Where Ruby runs: its backend, its Sidekiq release, and the fixtures folder inside its root filesystem. */
export interface RubyHost {
  backend: SidekiqBackend;
  target: SidekiqTarget;
  fixtures: string;
}

export interface WorkerSpec {
  /** The Redis the worker connects to (the fault proxy's, in a network row). */
  url: string;
  concurrency: number;
  queues: string[];
  env: Record<string, string>;
  /** Node: the handlers module, and extra CLI flags. */
  handlers: string;
  nodeArgs?: string[];
  nodeLabel: string;
  /** Ruby: the fixture the `sidekiq` process requires, the peer gem folders it loads, and how the row names it. */
  rubyRequire: string;
  peers: string[];
  rubyLabel: (target: SidekiqTarget) => string;
}

export interface ChaosWorker {
  readonly label: string;
  readonly pid: number;
  output(): string;
  /** Exited on its own, not by kill9() or stop(). */
  died(): boolean;
  /** SIGKILL; resolves once it exited. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Node's worker, or Ruby's when `ruby` is given. */
export async function startChaosWorker(spec: WorkerSpec, ruby?: RubyHost): Promise<ChaosWorker> {
  let ended = false;
  if (ruby) {
    const p: SidekiqProcess = await ruby.backend.startSidekiq(ruby.target, {
      queues: spec.queues,
      concurrency: spec.concurrency,
      require: spec.rubyRequire,
      env: { ...spec.env, REDIS_URL: spec.url, RUBYLIB: peersRubyLib(ruby.fixtures, spec.peers) },
    });
    return {
      label: spec.rubyLabel(ruby.target),
      pid: p.pid,
      output: () => p.log(),
      // The local backend's pid is Ruby's own (it execs in place); Node reaps it once it exits.
      died: () => !ended && !alive(p.pid),
      kill9: () => ((ended = true), p.stop("SIGKILL")),
      stop: () => ((ended = true), p.stop()),
    };
  }
  const child = spawnNodeWorker(spec.url, spec.concurrency, spec.nodeArgs, spec.env, {
    queues: spec.queues,
    handlers: spec.handlers,
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    label: spec.nodeLabel,
    pid: child.pid!,
    output: () => child.output(),
    died: () => !ended && child.exitCode !== null,
    async kill9() {
      ended = true;
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    stop: () => ((ended = true), stopChild(child)),
  };
}
