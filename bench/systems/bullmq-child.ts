// The process the harness measures for BullMQ: its Queue (role "client") or
// its Worker (role "worker"), on queue `bench`. Jobs are removed on completion
// (removeOnComplete: true), the closest to Sidekiq, which keeps nothing.
import { Queue, Worker } from "bullmq";
import { JobCounter, runChild, serveClient, serveWorker } from "../lib/protocol.js";

const url = new URL(process.env.BENCH_REDIS_URL!);
const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
const role = process.env.BENCH_ROLE;
const BULLMQ_JOB_OPTIONS = { removeOnComplete: true } as const;

async function client(): Promise<void> {
  const queue = new Queue("bench", { connection, defaultJobOptions: BULLMQ_JOB_OPTIONS });
  await queue.waitUntilReady();
  await serveClient({
    bulk(n, batch) {
      const jobs = Array.from({ length: n }, (_, i) => ({ name: "noop", data: { i } }));
      return async () => {
        for (let s = 0; s < jobs.length; s += batch) await queue.addBulk(jobs.slice(s, s + batch));
      };
    },
    one: (arg, paced) => queue.add("noop", paced ? { t: arg } : { i: arg }),
  });
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
  await serveWorker(counter);
  await w.close();
}

await runChild(role === "worker" ? worker : client);
