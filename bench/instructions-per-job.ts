// CPU a job as instructions, for one job at a time: a worker draining at
// concurrency 1 and a client pushing with one push in flight. Instruction
// counts (valgrind's callgrind: every thread of the process, JIT code
// included) hardly move with the machine's load, so trees differing by a few
// percent can be told apart on a shared machine where CPU time cannot.
// Each tree's child (bench/instructions/one-in-flight-child.ts, bundled with
// that tree's src/) runs a warm-up, then the measured jobs between two marks
// where callgrind dumps its counts: start-up, connect, warm-up and exit are
// not in the figure.
//
//   npx tsx bench/instructions-per-job.ts [jobs=3000] [repeats=3] [warmup=3000]
//   BENCH_TREES=before=/some/copy/src,now=src ...   # label=src dir, in this order
//   BENCH_ROLES=drain,push ...
//   BENCH_NODE_FLAGS="..." ...   # the child's node flags (default: the CLI worker's)
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { WORKER_NODE_FLAGS } from "../src/tools/cli/node-flags.js";
import { bundle, REPO_ROOT } from "./lib/build.js";

const n = Number(process.argv[2] ?? 3000);
const repeats = Number(process.argv[3] ?? 3);
const warmup = Number(process.argv[4] ?? 3000);
const trees = (process.env.BENCH_TREES ?? "this=src").split(",").map((t) => {
  const [label, dir] = t.split("=") as [string, string];
  return { label, src: resolve(REPO_ROOT, dir) };
});
const roles = (process.env.BENCH_ROLES ?? "drain,push").split(",");
const flags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [...WORKER_NODE_FLAGS];

/** Instructions between the child's two marks, as callgrind counts them. */
async function count(file: string, role: string, url: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "instructions-"));
  const out = join(dir, "callgrind.out");
  const args = ["--tool=callgrind", "--smc-check=all-non-file", "--dump-before=uv_os_getppid"];
  const proc = spawn("valgrind", [...args, `--callgrind-out-file=${out}`, process.execPath, ...flags, file], {
    env: {
      ...process.env,
      BENCH_ROLE: role,
      BENCH_WARMUP: String(warmup),
      BENCH_JOBS: String(n),
      BENCH_REDIS_URL: url,
    },
    stdio: ["ignore", "inherit", "pipe"],
  });
  let err = "";
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const code = await new Promise((ok) => proc.on("exit", ok));
  try {
    // Dump 1 holds start-up and warm-up; dump 2 the measured jobs.
    const m = /^totals: (\d+)/m.exec(readFileSync(`${out}.2`, "utf8"));
    if (code !== 0 || !m) throw new Error(`child exited ${code}: ${err.slice(-2000)}`);
    return Number(m[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const server = await startRedis();
const redis = new Redis(server.url);
const stager = new Client({ redis: server.url, dialect: "8.1.7" });
const files = new Map<string, string>();
for (const t of trees) files.set(t.label, await bundle("instructions/one-in-flight-child", t.src));
console.log(`node ${process.version} ${flags.join(" ")}; ${warmup} jobs of warm-up, then ${n} measured`);
console.log("| scenario | tree | repeat | instructions / job |");
console.log("| --- | --- | ---: | ---: |");
try {
  // Interleaved: every tree's run of a repeat before the next repeat.
  for (const role of roles)
    for (let r = 1; r <= repeats; r++)
      for (const t of trees) {
        await redis.flushdb();
        if (role === "drain")
          await stager.pushBulk({
            class: "BenchNoopJob",
            queue: "bench",
            args: Array.from({ length: warmup + n }, (_, i) => [i]),
          });
        const per = (await count(files.get(t.label)!, role, server.url)) / n;
        const label = role === "drain" ? "drain, concurrency 1" : "push, 1 in flight";
        console.log(`| ${label} | ${t.label} | ${r} | ${Math.round(per)} |`);
      }
} finally {
  await stager.close();
  redis.disconnect();
  await server.stop();
}
