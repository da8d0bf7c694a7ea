// The part of a worker's peak RSS that is not sidekiq-bridge's: a node
// process alone, then one that has required ioredis (the Redis client the
// project is built on), both with the worker's node flags on the node the
// bench runs. The peak RSS target is judged beside these, so a miss shows
// how much of the peak is ours to spend.
import { execFileSync } from "node:child_process";
import { median } from "./summary.js";

export interface RssFloor {
  /** Peak RSS (VmHWM) of node alone, MiB: median of the samples. */
  nodeMiB: number;
  /** Peak RSS of node after require("ioredis"), MiB. */
  ioredisMiB: number;
}

// Waits a moment so what loading started (compiler threads) has settled, then
// prints its own VmHWM in kB.
const PROBE = (load: string) =>
  `${load};setTimeout(()=>{const m=/^VmHWM:\\s+(\\d+)/m.exec(require("node:fs").readFileSync("/proc/self/status","utf8"));process.stdout.write(m?m[1]:"")},300)`;

function peakMiB(flags: readonly string[], load: string, cwd: string): number {
  const out = execFileSync(process.execPath, [...flags, "-e", PROBE(load)], { cwd, encoding: "utf8" });
  const kb = Number(out.trim());
  if (!Number.isFinite(kb) || kb <= 0) throw new Error(`could not read VmHWM from a probe: ${JSON.stringify(out)}`);
  return kb / 1024;
}

/** Three samples of each, alternating; `cwd` must resolve ioredis (the repository). */
export function measureRssFloor(flags: readonly string[], cwd: string, samples = 3): RssFloor {
  const node: number[] = [];
  const ioredis: number[] = [];
  for (let i = 0; i < samples; i++) {
    node.push(peakMiB(flags, "void 0", cwd));
    ioredis.push(peakMiB(flags, 'require("ioredis")', cwd));
  }
  return { nodeMiB: median(node), ioredisMiB: median(ioredis) };
}
