// Where the enqueue-to-start tail comes from: a child process pushes RATE
// jobs/s (each carrying its push time on the wall clock, nowMs(), a
// clock both processes share) while this process runs the public Worker and
// notes when each job starts, every GC pause (PerformanceObserver "gc") and
// the event loop's delay (monitorEventLoopDelay). After a warm-up it prints
// p50 / p99 / p99.9 and, for the jobs above p99, how many started during or
// right after a GC pause, and the pusher's own push-to-reply times (the
// client's share). Latency figures depend on the machine's load; the share
// of the tail that GC explains much less so.
//
//   npx tsx bench/latency-causes.ts [seconds=60] [rate=1000] [warmup=10]
//   BENCH_FETCH=basic ... (default reliable)
//   LATENCY_SURVIVORS=1 ... also samples the allocations that outlive a
//                    young-generation collection (they make scavenges slow)
//                    and prints the top allocation sites
//   BENCH_PIN=1 ...  the bench's placement: Redis and the pusher on CPU 0, this
//                    process (every thread, V8's helpers too) on CPU 1
import { spawn } from "node:child_process";
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks";
import { startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { nowMs } from "../src/core/wire/timestamps.js";
import { AUX_CPU, pinnedArgv, pinPid, REDIS_CPU, TEST_CPU } from "./lib/cpu.js";
import { percentile } from "./measure/summary.js";
import type { Logger } from "../src/core/logging/logger.js";

const [seconds, rate, warmup] = [60, 1000, 10].map((d, i) => Number(process.argv[2 + i] ?? d)) as [
  number,
  number,
  number,
];
// Pusher and worker are two processes: both read the wall clock (nowMs), since
// each process's timeOrigin is off by its own few milliseconds.
/** A performance-timeline time (GC entries) on the same wall clock. */
const wallOf = (mono: number) => mono + nowMs() - performance.now();

if (process.env.LATENCY_PUSHER) {
  // The pusher: one job every 1000/rate ms, on a steady schedule.
  const client = new Client({ redis: process.env.REDIS_URL!, dialect: "8.1.7" });
  const Job = client.job<[number]>("LatencyJob", { queue: "latency" });
  const from = nowMs() + warmup * 1000;
  const end = from + seconds * 1000;
  // The client's own share: from a job's push time to its LPUSH's reply.
  // A job cannot start before it is in Redis, so this bounds what the client
  // (its event loop, its GC, the socket write) adds to the job's latency.
  const replied: number[] = [];
  let next = nowMs();
  while (nowMs() < end) {
    next += 1000 / rate;
    const t = nowMs();
    void Job.performAsync(t).then(() => {
      if (t >= from) replied.push(nowMs() - t);
    });
    const wait = next - nowMs();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    else await new Promise((r) => setImmediate(r));
  }
  await client.close();
  replied.sort((a, b) => a - b);
  const at = (p: number) => percentile(replied, p * 100);
  process.stdout.write(
    `${JSON.stringify({ p50ms: at(0.5), p99ms: at(0.99), p999ms: at(0.999), maxms: replied.at(-1) })}\n`,
  );
  process.exit(0);
}

const quiet: Logger = { debug() {}, info() {}, warn: console.error, error: console.error };
const server = await startRedis();
const pin = process.env.BENCH_PIN === "1";
if (pin) {
  pinPid(server.pid, REDIS_CPU);
  pinPid(process.pid, TEST_CPU);
}
const samples: Array<[start: number, latency: number]> = [];
const gcs: Array<[start: number, end: number, kind: number]> = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries())
    gcs.push([
      wallOf(e.startTime),
      wallOf(e.startTime + e.duration),
      (e as unknown as { detail?: { kind: number } }).detail?.kind ?? 0,
    ]);
}).observe({ entryTypes: ["gc"] });
const loop = monitorEventLoopDelay({ resolution: 1 });
const w = new Worker({
  redis: server.url,
  dialect: "8.1.7",
  queues: ["latency"],
  concurrency: 10,
  fetch: (process.env.BENCH_FETCH as "basic" | "reliable" | undefined) ?? "reliable",
  scheduler: false,
  logger: quiet,
});
w.register<[number]>("LatencyJob", ([pushed]) => {
  const t = nowMs();
  samples.push([t, t - pushed]);
});
await w.start();
const [cmd, ...args] = pinnedArgv(pin ? AUX_CPU : undefined, [
  process.execPath,
  ...(process.env.LATENCY_PUSHER_FLAGS ?? "").split(" ").filter(Boolean),
  "--import",
  "tsx",
  fileURLToPath(import.meta.url),
  ...process.argv.slice(2),
]);
const pusher = spawn(cmd!, args, {
  env: { ...process.env, LATENCY_PUSHER: "1", REDIS_URL: server.url },
  stdio: ["ignore", "pipe", "inherit"],
});
let pusherOut = "";
pusher.stdout!.on("data", (d: Buffer) => {
  pusherOut += d.toString();
});
await new Promise((r) => setTimeout(r, warmup * 1000));
const from = nowMs();
loop.enable();
// Only allocations that survive a scavenge: what makes each scavenge copy.
const inspector = process.env.LATENCY_SURVIVORS === "1" ? new Session() : undefined;
if (inspector) {
  inspector.connect();
  await inspector.post("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: false,
  });
}
await new Promise((r) => pusher.once("exit", r));
loop.disable();
const survivors = inspector
  ? topSites(((await inspector.post("HeapProfiler.stopSampling")) as { profile: SamplingProfile }).profile)
  : undefined;
await new Promise((r) => setTimeout(r, 500));
await w.stop();
await server.stop();

const measured = samples.filter(([t]) => t >= from);
const lat = measured.map(([, l]) => l).sort((a, b) => a - b);
const q = (p: number) => percentile(lat, p * 100);
const p99 = q(0.99);
const gcIn = gcs.filter(([s]) => s >= from);
// A job is GC-delayed when a pause ended no earlier than its push and no later than its start.
const tail = measured.filter(([, l]) => l >= p99);
const duringGc = tail.filter(([t, l]) => gcIn.some(([, e]) => e >= t - l && e <= t + 0.05)).length;
const kinds = new Map<number, { n: number; ms: number }>();
for (const [s, e, k] of gcIn) {
  const v = kinds.get(k) ?? { n: 0, ms: 0 };
  v.n++;
  v.ms += e - s;
  kinds.set(k, v);
}
if (process.env.LATENCY_WORST) {
  // The worst jobs: when they started (s since the measured start) and the GC pauses that ended while they waited.
  const worst = [...measured].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.LATENCY_WORST));
  for (const [t, l] of worst.sort((a, b) => a[0] - b[0])) {
    const gc = gcIn.filter(([, e]) => e >= t - l && e <= t + 0.05).map(([s, e, k]) => `k${k} ${(e - s).toFixed(1)}ms`);
    console.error(`${((t - from) / 1000).toFixed(3)} s: ${l.toFixed(2)} ms ${gc.join(", ")}`);
  }
}
console.log(
  JSON.stringify(
    {
      fetch: process.env.BENCH_FETCH ?? "reliable",
      nodeFlags: process.execArgv.filter((f) => f.startsWith("--") && f !== "--import"),
      pinned: pin,
      jobs: lat.length,
      p50ms: q(0.5),
      p99ms: p99,
      p999ms: q(0.999),
      maxms: lat.at(-1),
      // The same figures for the client alone: push time to its LPUSH's reply.
      clientPushToReplyMs: pusherOut.trim() ? JSON.parse(pusherOut.trim()) : null,
      tailJobs: tail.length,
      tailJobsDelayedByGc: duringGc,
      // kind: 1 minor (scavenge), 4 major, 8 incremental, 16 weak callbacks (perf_hooks.constants)
      gc: Object.fromEntries([...kinds].map(([k, v]) => [k, { n: v.n, totalMs: v.ms, meanMs: v.ms / v.n }])),
      ...(survivors ? { survivorsBySite: survivors } : {}),
      eventLoopDelayMs: {
        p50: loop.percentile(50) / 1e6,
        p99: loop.percentile(99) / 1e6,
        max: loop.max / 1e6,
      },
    },
    null,
    1,
  ),
);

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}
interface SamplingProfile {
  head: SamplingNode;
}

/** Bytes sampled per allocation site (function, file:line), largest first, with the share of all. */
function topSites(profile: SamplingProfile): string[] {
  const sites = new Map<string, number>();
  let total = 0;
  const visit = (n: SamplingNode, stack: string[]) => {
    const f = n.callFrame;
    const here = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(node_modules|src)\//, "$1/")}:${f.lineNumber + 1}:${(f as { columnNumber?: number }).columnNumber ?? 0}`;
    const path = [...stack, here].slice(-3);
    if (n.selfSize > 0) {
      const key = path.join(" < ");
      sites.set(key, (sites.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) visit(c, path);
  };
  visit(profile.head, []);
  return [...sites]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 15)
    .map(([k, v]) => `${((100 * v) / total).toFixed(1)}% ${k}`);
}
