// Peak RSS of a worker draining N no-op jobs at concurrency C: the real CLI
// (`node <its flags> dist/assembly/main.js worker`) and an application embedding
// the Worker (bench/rss/embedded-worker.mjs) with and without node flags. The
// jobs are staged first where the idle worker cannot see them, then released
// with one RENAME; the worker reports VmHWM itself at the last job. RSS
// hardly depends on the machine's load, unlike throughput.
//
//   npm run build && npx tsx bench/drain-rss.ts [jobs=50000] [concurrency=10]
//   DRAIN_RSS_FLAGS="--max-semi-space-size=1" npx tsx bench/drain-rss.ts   # one more variant
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Redis } from "ioredis";
import { REPO_ROOT } from "../harness/local-backend.js";
import { startRedis } from "../harness/redis-server.js";
import { WORKER_NODE_FLAGS } from "../src/tools/cli/node-flags.js";
import { Client } from "../src/core/client/client.js";

const n = Number(process.argv[2] ?? 50_000);
const concurrency = Number(process.argv[3] ?? 10);

interface Variant {
  name: string;
  args: string[];
}
const cli = (flags: readonly string[]): string[] => [
  ...flags,
  join(REPO_ROOT, "dist/assembly/main.js"),
  "worker",
  "-q",
  "bench",
  "-c",
  String(concurrency),
  "-r",
  join(REPO_ROOT, "bench/rss/noop-handlers.mjs"),
  "--dialect",
  "8.1.7",
];
const embedded = (flags: readonly string[]): string[] => [...flags, join(REPO_ROOT, "bench/rss/embedded-worker.mjs")];
// DRAIN_RSS_ONLY=1: only the DRAIN_RSS_FLAGS variant (experiments).
const variants: Variant[] = [
  ...(process.env.DRAIN_RSS_ONLY
    ? []
    : [
        { name: `CLI (node ${WORKER_NODE_FLAGS.join(" ")})`, args: cli(WORKER_NODE_FLAGS) },
        { name: "embedded Worker, no flags", args: embedded([]) },
        { name: `embedded Worker, ${WORKER_NODE_FLAGS.join(" ")}`, args: embedded(WORKER_NODE_FLAGS) },
        {
          name: "embedded Worker, no flags, v8.setFlagsFromString('--semi-space-growth-factor=1 --heap-growing-percent=50') in the app",
          args: [join(REPO_ROOT, "bench/rss/embedded-worker-small-young.mjs")],
        },
      ]),
  ...(process.env.DRAIN_RSS_FLAGS
    ? [
        {
          name: `embedded Worker, ${process.env.DRAIN_RSS_FLAGS}`,
          args: embedded(process.env.DRAIN_RSS_FLAGS.split(" ")),
        },
      ]
    : []),
];

const server = await startRedis();
const redis = new Redis(server.url);
const client = new Client({ redis: server.url, dialect: "8.1.7" });

async function drain(v: Variant): Promise<Record<string, number>> {
  await redis.flushdb();
  await client.pushBulk({ class: "BenchNoopJob", queue: "bench", args: Array.from({ length: n }, (_, i) => [i]) });
  await redis.rename("queue:bench", "bench:staged");
  const child = spawn(process.execPath, v.args, {
    env: { ...process.env, REDIS_URL: server.url, DRAIN_JOBS: String(n), DRAIN_CONCURRENCY: String(concurrency) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let waiting: (() => void) | undefined;
  // The CLI logs to stderr, the job prints to stdout.
  for (const stream of [child.stdout, child.stderr])
    stream.on("data", (d) => {
      out += d;
      waiting?.();
    });
  const line = (re: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`${v.name}: no ${re} in 300 s:\n${out}`)), 300_000);
      waiting = () => {
        const m = re.exec(out);
        if (!m) return;
        clearTimeout(t);
        waiting = undefined;
        resolve(m[1] ?? "");
      };
      waiting();
    });
  try {
    // Started: the CLI logs its start line, the embedded worker says so.
    await line(/(started|DRAIN_READY)/);
    await new Promise((r) => setTimeout(r, 1000));
    await redis.rename("bench:staged", "queue:bench");
    return JSON.parse(await line(/DRAIN_RSS (.*)\n/)) as Record<string, number>;
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

console.log(
  `| worker (${n.toLocaleString("en-US")} jobs, concurrency ${concurrency}) | peak RSS MB | peak before the first job MB | RSS at the end MB | heap used / total MB | external MB |`,
);
console.log("| --- | --- | --- | --- | --- | --- |");
try {
  for (const v of variants) {
    const m = await drain(v);
    const f = (x: number | undefined) => (x ?? 0).toFixed(1);
    console.log(
      `| ${v.name} | ${f(m.peakMB)} | ${f(m.atFirstJobMB)} | ${f(m.rssMB)} | ${f(m.heapUsedMB)} / ${f(m.heapTotalMB)} | ${f(m.externalMB)} |`,
    );
  }
} finally {
  await client.close();
  redis.disconnect();
  await server.stop();
}
