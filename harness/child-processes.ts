// The children the tests start, alike on Node, Bun and Deno (npm test runs
// vitest on each): a TypeScript source run from this repository's sources,
// and signals sent so that the exit code read afterwards is the child's own.
import type { ChildProcess } from "node:child_process";

const ON_DENO = typeof (process.versions as { deno?: string }).deno === "string";

/**
 * The argv before a TypeScript source for `spawn(process.execPath, …)`: tsx
 * on Node (and on Bun, which runs TypeScript itself); on Deno its own
 * TypeScript, with the sources' `.js` specifiers resolved to their `.ts`
 * files (--sloppy-imports), which is what tsx does on Node. Deno turns Node's
 * flags into its own, but has none for tsx's loader: its command is given.
 */
export function typescriptArgv(): string[] {
  return ON_DENO ? ["run", "-A", "--sloppy-imports"] : ["--import", "tsx"];
}

/** The argv that evaluates ES module source with the sources' `.ts` imports resolving (`node -e`, `deno eval`). */
export function evalTypescriptArgv(source: string): string[] {
  return ON_DENO ? ["eval", "--sloppy-imports", source] : ["--import", "tsx", "--input-type=module", "-e", source];
}

/**
 * Sends a signal to a child by its pid, as kill(1) or systemd does. Not
 * ChildProcess#kill: after it, Deno reports the child's exit as killed by
 * that signal (code null) however the child ended, its own exit(0) too, so a
 * test could not tell a clean stop from a kill. Sent to the pid, the exit
 * event carries what the child did on every runtime.
 */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) throw new Error(`cannot send ${signal}: the child has no pid (it did not start)`);
  // Exited already: its pid may be another process's by now.
  if (child.exitCode !== null || child.signalCode !== null) return;
  process.kill(child.pid, signal);
}
