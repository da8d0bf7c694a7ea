// How tests reach a real Ruby Sidekiq: a backend runs Ruby scripts and
// `sidekiq` server processes for one release of the matrix.
import type { SidekiqTarget } from "./versions.js";

export interface RubyResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunRubyOptions {
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
}

export interface StartSidekiqOptions {
  queues: string[];
  concurrency?: number;
  /** Shutdown timeout (`-t`), seconds. */
  timeout?: number;
  tag?: string;
  env?: Record<string, string>;
  /** Ruby file to require, relative to ruby-fixtures/ (default lib/jobs.rb). */
  require?: string;
}

export interface SidekiqProcess {
  /** Pid of the Ruby process (as seen from this machine for the local backend). */
  readonly pid: number;
  readonly logPath: string;
  log(): string;
  /** Sends a signal and returns (TSTP: quiet); works for a process inside a container too. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** Sends a signal (TERM by default) and waits for the process to exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<void>;
}

export interface SidekiqBackend {
  readonly name: "local" | "docker";
  /** Redis URL as Ruby inside the backend sees it, for a database index. */
  rubyRedisUrl(db: number): string;
  runRuby(target: SidekiqTarget, script: string, args?: string[], opts?: RunRubyOptions): Promise<RubyResult>;
  startSidekiq(target: SidekiqTarget, opts: StartSidekiqOptions): Promise<SidekiqProcess>;
}

/** What globalSetup hands to test workers (JSON-serialisable). */
export interface HarnessInfo {
  backend: "local" | "docker";
  redisUrl: string;
  /** Redis URL as seen from Ruby (differs from redisUrl only under docker). */
  rubyRedisBase: string;
  versions: string[];
  /** local: suite -> root filesystem path. */
  rootfs: Record<string, string>;
  /** local: the folder inside each root filesystem holding this run's copy of ruby-fixtures. */
  fixturesDir: string;
  logDir: string;
  composeFile?: string;
  /** docker: service name -> container id of this run's compose project. */
  containers?: Record<string, string>;
  /** docker: why no engine could be started; every interop test is then skipped. */
  unavailable?: string;
}
