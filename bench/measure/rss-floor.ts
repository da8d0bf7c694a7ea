// The part of a worker's peak RSS that is not sidekiq-bridge's: a node
// process alone, then one that has required ioredis (the Redis client the
// project is built on), then one whose ioredis is connected (an empty event
// loop with one connection open, after a PING), all with the same node flags
// on the node the bench runs. The peak RSS figures are judged beside these,
// so a miss shows how much of the peak is ours to spend.
import { execFileSync } from "node:child_process";
import { startRedis } from "../../harness/redis-server.js";
import { median } from "./summary.js";

export interface RssFloor {
  /** Peak RSS (VmHWM) of node alone, MiB: median of the samples. */
  nodeMiB: number;
  /** Peak RSS of node after require("ioredis"), MiB. */
  ioredisMiB: number;
  /** Peak RSS of node with one ioredis connection open and idle, MiB. */
  connectedMiB: number;
}

// Waits a moment so what loading started (compiler threads) has settled, then
// prints its own VmHWM in kB.
const REPORT = `setTimeout(()=>{const m=/^VmHWM:\\s+(\\d+)/m.exec(require("node:fs").readFileSync("/proc/self/status","utf8"));process.stdout.write(m?m[1]:"");r?.disconnect()},300)`;
const PROBE = (load: string) => `let r;${load};${REPORT}`;
const CONNECTED = (url: string) =>
  `const{Redis}=require("ioredis");r=new Redis(${JSON.stringify(url)});r.ping().then(()=>{${REPORT}})`;

function peakMiB(flags: readonly string[], program: string, cwd: string): number {
  const out = execFileSync(process.execPath, [...flags, "-e", program], { cwd, encoding: "utf8" });
  const kb = Number(out.trim());
  if (!Number.isFinite(kb) || kb <= 0) throw new Error(`could not read VmHWM from a probe: ${JSON.stringify(out)}`);
  return kb / 1024;
}

/** Three samples of each, alternating, against a Redis of its own; `cwd` must resolve ioredis (the repository). */
export async function measureRssFloor(flags: readonly string[], cwd: string, samples = 3): Promise<RssFloor> {
  const server = await startRedis();
  const node: number[] = [];
  const ioredis: number[] = [];
  const connected: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      node.push(peakMiB(flags, PROBE("void 0"), cwd));
      ioredis.push(peakMiB(flags, PROBE('require("ioredis")'), cwd));
      connected.push(peakMiB(flags, `let r;${CONNECTED(server.url)}`, cwd));
    }
  } finally {
    await server.stop();
  }
  return { nodeMiB: median(node), ioredisMiB: median(ioredis), connectedMiB: median(connected) };
}
