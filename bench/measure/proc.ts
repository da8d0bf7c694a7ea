// Per-process CPU and memory from /proc (Linux): the same source for Node and
// Ruby processes. Node children also report process.cpuUsage() and Ruby
// CLOCK_PROCESS_CPUTIME_ID themselves; the harness prefers those (microsecond
// resolution) and keeps /proc's clock-tick figure as a cross-check.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

let ticks: number | undefined;
/** Clock ticks per second of /proc's CPU counters. */
export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/** utime + stime of every thread of `pid`, in microseconds (clock-tick resolution). */
export function procCpuUs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1e6) / clockTicks();
  } catch {
    return undefined;
  }
}

export interface Memory {
  /** Peak resident set size so far (VmHWM), MiB. */
  peakMiB: number;
  /** Resident set size now (VmRSS), MiB. */
  rssMiB: number;
}

export function procMemory(pid: number): Memory | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { peakMiB: kb("VmHWM") / 1024, rssMiB: kb("VmRSS") / 1024 };
  } catch {
    return undefined;
  }
}
