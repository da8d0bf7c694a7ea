// The real `sidekiq-bridge` binary (dist/, built by the interop global setup)
// as a long-running child, for tests that signal it: its exit code, and its
// stdout and stderr together as one log.
import { type ChildProcess, spawn } from "node:child_process";
import { REPO_ROOT } from "../../harness/local-backend.js";

export interface CliProcess {
  child: ChildProcess;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** What it printed so far. */
  output(): string;
}

export function startCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ["dist/cli/main.js", ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  return { child, exited, output: () => log };
}
