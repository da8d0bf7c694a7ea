// One drain through the public Worker, timed from the moment the jobs appear:
// they are enqueued where the idle worker cannot see them, then released at
// once by a RENAME (Sidekiq's sidekiqload method), so the worker's start-up
// and the enqueueing are outside the window. Used by the in-process drain
// benches (fetch-ahead.ts, fetch-lanes.ts).
import { Redis } from "ioredis";
import { Client } from "../../src/core/client/client.js";
import { consoleLogger } from "../../src/core/logging/logger.js";
import { Worker, type WorkerOptions } from "../../src/assembly/worker.js";

export interface TimedDrainOptions {
  url: string;
  jobs: number;
  queue: string;
  /** Merged over the bench's defaults (dialect 8, no scheduler, warnings only, no job lines). */
  worker: Partial<WorkerOptions>;
  /** The job's work, given its index and a connection of the drain's own (default: none). */
  job?: (i: number, redis: Redis) => unknown;
  /** Called once the worker has started, before the jobs appear (to count its events). */
  started?: (worker: Worker) => void;
}

export interface TimedDrain {
  rate: number;
  /** This process's CPU a job, user and system, µs (Redis's own is not in it). */
  cpuUs: number;
  userUs: number;
  systemUs: number;
  /** The event loop's busy share over the drain (the rest: waiting for Redis). */
  elu: number;
}

/** Enqueues `jobs` jobs of `cls` (args [0], [1], ...) on `queue`, 1,000 a bulk push. */
export async function stageJobs(
  client: Pick<Client, "pushBulk">,
  cls: string,
  queue: string,
  jobs: number,
): Promise<void> {
  for (let i = 0; i < jobs; i += 1000) {
    const args = Array.from({ length: Math.min(1000, jobs - i) }, (_, k) => [i + k]);
    await client.pushBulk({ class: cls, queue, args });
  }
}

export async function timedDrain(o: TimedDrainOptions): Promise<TimedDrain> {
  const redis = new Redis(o.url);
  await redis.flushdb();
  const hold = `${o.queue}-hold`;
  const client = new Client({ redis: o.url, dialect: 8 });
  await stageJobs(client, "DrainJob", hold, o.jobs);
  await client.close();
  const worker = new Worker({
    redis: o.url,
    dialect: 8,
    queues: [o.queue],
    scheduler: false,
    logger: consoleLogger({ level: "warn" }),
    skipDefaultJobLogging: true,
    ...o.worker,
  });
  let ran = 0;
  let finished: () => void = () => {};
  const allDone = new Promise<void>((r) => (finished = r));
  const tick = () => {
    if (++ran === o.jobs) finished();
  };
  const job = o.job;
  // A no-op job stays synchronous: an async handler would add a promise a job to what is measured.
  worker.register<[number]>(
    "DrainJob",
    job
      ? async (args) => {
          await job(args[0], redis);
          tick();
        }
      : tick,
  );
  await worker.start();
  o.started?.(worker);
  const c0 = process.cpuUsage();
  const e0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await redis.rename(`queue:${hold}`, `queue:${o.queue}`);
  await allDone;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(c0);
  const elu = performance.eventLoopUtilization(e0).utilization;
  await worker.stop();
  redis.disconnect();
  return {
    rate: o.jobs / seconds,
    cpuUs: (cpu.user + cpu.system) / o.jobs,
    userUs: cpu.user / o.jobs,
    systemUs: cpu.system / o.jobs,
    elu,
  };
}
