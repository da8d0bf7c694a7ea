// The real `sidekiq-bridge` binary (dist/, built by the interop global setup)
// as a long-running child, for tests that signal it: its exit code, its
// stdout and stderr together as one log, and its stderr alone.
import { type ChildProcess, spawn } from "node:child_process";
import { REPO_ROOT } from "../../harness/local-backend.js";

export interface CliProcess {
  child: ChildProcess;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /**
   * Its exit, once its output has been read to the end. Taken at spawn: a
   * child that already exited does not emit "close" again.
   */
  closed: Promise<void>;
  /** What it printed so far. */
  output(): string;
  /** What it printed so far on stderr alone (where the worker logs). */
  stderr(): string;
}

export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ["dist/assembly/main.js", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  let err = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => {
    log += d;
    err += d;
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  const closed = new Promise<void>((r) => child.once("close", () => r()));
  return { child, exited, closed, output: () => log, stderr: () => err };
}
