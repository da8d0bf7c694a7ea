// This machine may be shared: how much CPU did processes other than ours (the
// process under test, its Redis, the harness, a load generator) use during a
// measured window? From /proc/stat (all CPUs) minus our processes' /proc CPU.
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { clockTicks, procCpuUs } from "./proc.js";

/** Busy time of all CPUs (everything but idle and iowait), in microseconds. */
function busyUs(): number | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return ((total - f[3]! - f[4]!) * 1e6) / clockTicks();
  } catch {
    return undefined;
  }
}

export class Interference {
  private readonly t0 = performance.now();
  private readonly busy0 = busyUs();
  private readonly ours0: Array<number | undefined>;

  constructor(private readonly pids: number[]) {
    this.ours0 = pids.map(procCpuUs);
  }

  /** Share (0-100) of all CPUs used by other processes during the window. */
  foreignPercent(): number | undefined {
    const busy1 = busyUs();
    if (busy1 === undefined || this.busy0 === undefined) return undefined;
    let ours = 0;
    this.pids.forEach((pid, i) => {
      const a = this.ours0[i];
      const b = procCpuUs(pid);
      if (a !== undefined && b !== undefined) ours += b - a;
    });
    const wallUs = (performance.now() - this.t0) * 1000;
    return Math.max(0, ((busy1 - this.busy0 - ours) / (wallUs * cpus().length)) * 100);
  }
}
