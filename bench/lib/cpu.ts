// CPU placement: Redis on CPU 0, the process under test on CPU 1, with
// `taskset` when the machine has it and at least two CPUs; otherwise nothing
// is pinned and the report says so.
import { spawnSync } from "node:child_process";
import { cpus } from "node:os";

export const REDIS_CPU = 0;
export const TEST_CPU = 1;
/** The harness itself and load generators share Redis's CPU, leaving CPU 1 to the system under test. */
export const AUX_CPU = 0;

let cached: boolean | undefined;
export function canPin(): boolean {
  cached ??= cpus().length >= 2 && spawnSync("sh", ["-c", "command -v taskset"]).status === 0;
  return cached;
}

/** `taskset -c <cpu> argv…`, or argv unchanged when pinning is not possible. */
export function pinnedArgv(cpu: number | undefined, argv: string[]): string[] {
  return cpu !== undefined && canPin() ? ["taskset", "-c", String(cpu), ...argv] : argv;
}

/** Pins every thread of a running process (e.g. redis-server, this harness). */
export function pinPid(pid: number, cpu: number): void {
  if (!canPin()) return;
  const r = spawnSync("taskset", ["-a", "-p", "-c", String(cpu), String(pid)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`taskset could not pin pid ${pid} to CPU ${cpu}: ${r.stderr}`);
}

export function placement(): string {
  return canPin()
    ? `Redis and the harness on CPU ${REDIS_CPU}, the process under test on CPU ${TEST_CPU} (taskset)`
    : `not pinned (taskset missing or fewer than 2 CPUs: ${cpus().length})`;
}
