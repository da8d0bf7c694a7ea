// The process the harness measures for BullMQ: its Queue (role "client") or
// its Worker (role "worker"), on queue `bench`. Jobs are removed on completion
// (removeOnComplete: true), the closest to Sidekiq, which keeps nothing.
import { Queue, Worker } from "bullmq";
import { commands, cpuUs, emit, JobCounter, nowMs, paced, withInflight } from "../lib/protocol.js";

const url = new URL(process.env.BENCH_REDIS_URL!);
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const role = process.env.BENCH_ROLE;
const BULLMQ_JOB_OPTIONS = { removeOnComplete: true } as const;

async function client(): Promise<void> {
  const queue = new Queue("bench", { connection, defaultJobOptions: BULLMQ_JOB_OPTIONS });
  await queue.waitUntilReady();
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    const c0 = cpuUs();
    if (cmd.op === "bulk") {
      const jobs = Array.from({ length: cmd.n }, (_, i) => ({ name: "noop", data: { i } }));
      const t0 = nowMs();
      for (let s = 0; s < jobs.length; s += cmd.batch) await queue.addBulk(jobs.slice(s, s + cmd.batch));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "single") {
      const t0 = nowMs();
      await withInflight(cmd.n, cmd.inflight, (i) => queue.add("noop", { i }));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "paced") {
      const t0 = nowMs();
      const lateMs = await paced(cmd.n, cmd.rate, (t) => queue.add("noop", { t }));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0, lateMs });
    }
  }
  await queue.close();
}

async function worker(): Promise<void> {
  const counter = new JobCounter();
  const w = new Worker(
    "bench",
    async (job) => {
      counter.tick((job.data as { t?: number }).t);
    },
    { connection, concurrency: Number(process.env.BENCH_CONCURRENCY ?? 10) },
  );
  w.on("error", (e) => console.error(`worker error: ${e.message}`));
  await w.waitUntilReady();
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    if (cmd.op === "expect") counter.arm(cmd.n, cmd.latency);
  }
  await w.close();
}

try {
  await (role === "worker" ? worker() : client());
  process.exit(0);
} catch (e) {
  emit({ type: "error", message: (e as Error).stack ?? String(e) });
  process.exit(1);
}
