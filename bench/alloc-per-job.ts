// Bytes allocated per job, CPU per job and Redis commands per job of a drain
// through the public Worker: figures that hardly depend on the machine's load,
// unlike throughput. A child process runs the Worker with --trace-gc-nvp (V8
// prints, at every GC, the bytes allocated since the previous one); the
// window opens and closes with a forced full GC, so the sum of `allocated=`
// between them is every byte the drain allocated on the V8 heap, and the sum
// of the scavenges' `promoted=` what moved to the old generation. Each child
// drains a warm-up round first (JIT), then the measured rounds.
//
//   npx tsx bench/alloc-per-job.ts [jobs=20000] [rounds=3]
//   BENCH_FETCH=basic,reliable BENCH_CONCURRENCY=10,50 BENCH_LANES=1 ...
//   ALLOC_PROFILE=1 ...   # also V8's sampling heap profile (objects GC'd
//                         # by minor and major GC included): the top allocators
//   ALLOC_PROFILE=survivors ...  # the same, of objects that outlived a young-
//                                # generation collection (promoted: they grow
//                                # the old generation until a full GC)
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { WORKER_NODE_FLAGS } from "../src/tools/cli/node-flags.js";
import { Client } from "../src/core/client/client.js";
import { countCommands, readCommandStats, resetCommandStats } from "./measure/commandstats.js";

const n = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);

if (process.env.ALLOC_CHILD) await child();
else await parent();

async function child(): Promise<void> {
  const { writeSync } = await import("node:fs");
  const { Worker } = await import("../src/assembly/worker.js");
  const gc = (globalThis as { gc?: () => void }).gc!;
  const say = (s: string) => writeSync(1, `${s}\n`);
  const quiet = { debug() {}, info() {}, warn: console.error, error: console.error };
  let ran = 0;
  let target = 0;
  let done: (() => void) | undefined;
  const w = new Worker({
    redis: process.env.REDIS_URL!,
    dialect: "8.1.7",
    queues: ["bench"],
    concurrency: Number(process.env.ALLOC_CONCURRENCY),
    fetch: process.env.ALLOC_FETCH as "basic" | "reliable",
    scheduler: false,
    logger: quiet,
    ...(process.env.ALLOC_LANES ? { fetchLanes: Number(process.env.ALLOC_LANES) } : {}),
  });
  w.register("BenchNoopJob", () => {
    if (++ran === target) done?.();
  });
  await w.start();
  let session: import("node:inspector").Session | undefined;
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((res, rej) => session!.post(method, params ?? {}, (e, r) => (e ? rej(e) : res(r as T))));
  say("READY");
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, count, profile] = line.split(" ");
    if (cmd !== "GO") break;
    target = ran + Number(count);
    const finished = new Promise<void>((r) => (done = r));
    if (profile === "1") {
      const inspector = await import("node:inspector");
      session = new inspector.Session();
      session.connect();
      await post("HeapProfiler.startSampling", {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        // ALLOC_PROFILE=survivors: only what outlived young-generation collections (what grows the old generation).
        includeObjectsCollectedByMinorGC: process.env.ALLOC_PROFILE !== "survivors",
      });
    }
    gc();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    say("MARK start");
    await finished;
    const ms = performance.now() - t0;
    // The last acknowledgements go out within a few ms of the last job.
    await new Promise((r) => setTimeout(r, 50));
    const cpu = process.cpuUsage(cpu0);
    let top: Array<[string, number]> = [];
    let sampled = 0;
    if (profile === "1") {
      interface Node {
        callFrame: { functionName: string; url: string; lineNumber: number };
        selfSize: number;
        children: Node[];
      }
      const { profile: p } = await post<{ profile: { head: Node } }>("HeapProfiler.getSamplingProfile");
      await post("HeapProfiler.stopSampling");
      const by = new Map<string, number>();
      const walk = (node: Node) => {
        const f = node.callFrame;
        const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(src|node_modules)\//, "$1/")}:${f.lineNumber + 1}`;
        by.set(key, (by.get(key) ?? 0) + node.selfSize);
        sampled += node.selfSize;
        for (const c of node.children) walk(c);
      };
      walk(p.head);
      top = [...by].sort((a, b) => b[1] - a[1]).slice(0, 30);
    }
    // This forced GC reports (before the mark) what was allocated since the last one.
    gc();
    say(`MARK end ${JSON.stringify({ ms, cpuUs: cpu.user + cpu.system, sampled, top })}`);
  }
  await w.stop();
  process.exit(0);
}

async function parent(): Promise<void> {
  const fetches = (process.env.BENCH_FETCH ?? "basic,reliable").split(",");
  const concurrencies = (process.env.BENCH_CONCURRENCY ?? "10").split(",").map(Number);
  const flags = process.env.ALLOC_NODE_FLAGS?.split(" ").filter(Boolean) ?? [...WORKER_NODE_FLAGS];
  const server = await startRedis();
  const redis = new Redis(server.url);
  const client = new Client({ redis: server.url, dialect: "8.1.7" });
  const args = Array.from({ length: n }, (_, i) => [i]);
  console.log(`node ${process.version}, flags ${flags.join(" ") || "none"}, ${n} jobs a round, median of ${rounds}`);
  console.log(
    "| fetch | concurrency | lanes | KB allocated / job | bytes promoted / job | CPU µs / job | commands / job | jobs/s (load-dependent) |",
  );
  console.log("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |");
  try {
    for (const fetch of fetches)
      for (const concurrency of concurrencies) {
        await redis.flushdb();
        const proc = spawn(
          process.execPath,
          ["--import", "tsx", "--expose-gc", "--trace-gc-nvp", ...flags, fileURLToPath(import.meta.url), String(n)],
          {
            env: {
              ...process.env,
              ALLOC_CHILD: "1",
              REDIS_URL: server.url,
              ALLOC_FETCH: fetch,
              ALLOC_CONCURRENCY: String(concurrency),
              ALLOC_LANES: process.env.BENCH_LANES ?? "",
            },
            stdio: ["pipe", "pipe", "inherit"],
          },
        );
        const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
        const next = async () => {
          const r = await lines.next();
          if (r.done) throw new Error("the child exited early");
          return r.value;
        };
        while ((await next()) !== "READY");
        const results: Array<{ kb: number; promotedB: number; cpu: number; cmds: number; rate: number }> = [];
        for (let round = 0; round <= rounds; round++) {
          const count = round === 0 ? Math.max(1000, n / 4) : n;
          // Staged under another queue: the idle worker would fetch some of a push to queue:bench.
          await client.pushBulk({ class: "BenchNoopJob", queue: "staging", args: args.slice(0, count) });
          await redis.rename("queue:staging", "bench:staged");
          await resetCommandStats(redis);
          const profile = process.env.ALLOC_PROFILE && round === rounds ? "1" : "0";
          proc.stdin.write(`GO ${count} ${profile}\n`);
          while ((await next()) !== "MARK start");
          await redis.rename("bench:staged", "queue:bench");
          let allocated = 0;
          let promoted = 0;
          let line: string;
          while (!(line = await next()).startsWith("MARK end")) {
            const m = / allocated=(\d+)/.exec(line);
            if (m) allocated += Number(m[1]);
            // What young-generation collections moved to the old generation:
            // it stays there until a full GC, so it is what grows the heap.
            const p = / promoted=(\d+)/.exec(line);
            if (p && / gc=s /.test(line)) promoted += Number(p[1]);
          }
          const r = JSON.parse(line.slice("MARK end ".length)) as {
            ms: number;
            cpuUs: number;
            sampled: number;
            top: Array<[string, number]>;
          };
          const cmds = countCommands(await readCommandStats(redis)).total / count;
          if (round === 0) continue;
          results.push({
            kb: allocated / count / 1024,
            promotedB: promoted / count,
            cpu: r.cpuUs / count,
            cmds,
            rate: (count / r.ms) * 1000,
          });
          if (r.top.length) {
            console.error(`sampled ${(r.sampled / count / 1024).toFixed(2)} KB/job (${fetch}, c${concurrency}); top:`);
            for (const [k, b] of r.top) console.error(`  ${(b / count).toFixed(0).padStart(6)} B/job  ${k}`);
          }
        }
        proc.stdin.end();
        await new Promise((r) => proc.once("exit", r));
        const med = (k: keyof (typeof results)[0]) => {
          const v = results.map((x) => x[k]).sort((a, b) => a - b);
          return v[Math.floor(v.length / 2)]!;
        };
        console.log(
          `| ${fetch} | ${concurrency} | ${process.env.BENCH_LANES ?? "default"} | ${med("kb").toFixed(2)} | ${Math.round(med("promotedB"))} | ${med("cpu").toFixed(1)} | ${med("cmds").toFixed(3)} | ${Math.round(med("rate"))} |`,
        );
      }
  } finally {
    await client.close();
    redis.disconnect();
    await server.stop();
  }
}
