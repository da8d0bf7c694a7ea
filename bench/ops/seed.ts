// Seeds an operator-scale fleet in Sidekiq 8.1.7's exact format (the bytes of
// ruby-fixtures/captures/8.1.7.json: key order, millisecond times, six-decimal
// scores, the heartbeat hash and its `info`, the `:work` hash of JSON strings),
// quickly: members are built from templates and written with variadic
// ZADD / LPUSH / HSET in pipelines of a few hundred thousand members, so a
// million retries take seconds, not hours.
import type { Redis } from "ioredis";

/** The sizes of one run (OPS_SCALE scales every count; 1 is the full operator scale). */
export interface FleetSize {
  retries: number;
  dead: number;
  scheduled: number;
  queues: number;
  jobsPerQueue: number;
  processes: number;
  jobsPerProcess: number;
}

export function fleetSize(scale: number, processes = 2000): FleetSize {
  const n = (x: number) => Math.max(1, Math.round(x * scale));
  return {
    retries: n(1_000_000),
    dead: n(100_000),
    scheduled: n(100_000),
    queues: n(500),
    jobsPerQueue: 1000,
    processes: n(processes),
    jobsPerProcess: 10,
  };
}

/** Job classes: 50 of them, so a class filter matches one entry in 50. */
export const CLASSES = 50;
export const className = (i: number) => `Ops::Job${i % CLASSES}`;
export const queueName = (i: number) => `q-${i}`;

const hex24 = (prefix: string, i: number) => `${prefix}${i.toString(16).padStart(24 - prefix.length, "0")}`;
/** Ruby's Float#to_s of an epoch with microseconds, as Sidekiq scores are written. */
const score = (seconds: number) => seconds.toFixed(6).replace(/0+$/, "").replace(/\.$/, ".0");

function jobJson(i: number, prefix: string, queues: number, extra: string, nowMs: number): string {
  const q = queueName(i % queues);
  return `{"retry":true,"queue":"${q}","args":[${i},{"account_id":${i % 9973},"note":"operator-scale payload"}],"class":"${className(i)}","jid":"${hex24(prefix, i)}","created_at":${nowMs - 86_400_000},"enqueued_at":${nowMs - 3_600_000}${extra}}`;
}

function failure(i: number, nowMs: number): string {
  return `,"error_message":"undefined method 'charge' for nil (attempt ${i % 25})","error_class":"NoMethodError","failed_at":${nowMs - 3_000_000},"retry_count":${i % 25},"retried_at":${nowMs - 60_000}`;
}

const PIPE_MEMBERS = 200_000;
const PER_COMMAND = 1000;

/** Writes `count` members of a sorted set built by `member(i)` / `scoreOf(i)`, 1,000 per ZADD. */
async function zaddMany(
  redis: Redis,
  key: string,
  count: number,
  member: (i: number) => string,
  scoreOf: (i: number) => string,
): Promise<void> {
  let pipe = redis.pipeline();
  let inPipe = 0;
  for (let at = 0; at < count; at += PER_COMMAND) {
    const args: string[] = [];
    for (let i = at; i < Math.min(count, at + PER_COMMAND); i++) args.push(scoreOf(i), member(i));
    pipe.zadd(key, ...args);
    inPipe += args.length / 2;
    if (inPipe >= PIPE_MEMBERS) {
      await pipe.exec();
      pipe = redis.pipeline();
      inPipe = 0;
    }
  }
  await pipe.exec();
}

/** The retry set: `count` failed jobs, retried over the next days (scores ascending with i). */
export async function seedRetries(redis: Redis, count: number, queues: number): Promise<void> {
  const nowMs = Date.now();
  await zaddMany(
    redis,
    "retry",
    count,
    (i) => jobJson(i, "a", queues, failure(i, nowMs), nowMs),
    (i) => score(nowMs / 1000 + 60 + i * 0.25 + (i % 7) * 1e-6),
  );
}

/** The dead, scheduled and queue data, and the fleet of processes. */
export async function seedFleet(redis: Redis, size: FleetSize): Promise<void> {
  const nowMs = Date.now();
  await seedRetries(redis, size.retries, size.queues);
  await zaddMany(
    redis,
    "dead",
    size.dead,
    (i) => jobJson(i, "d", size.queues, failure(i, nowMs), nowMs),
    (i) => score(nowMs / 1000 - 86_400 + i * 0.5),
  );
  await zaddMany(
    redis,
    "schedule",
    size.scheduled,
    (i) =>
      `{"retry":true,"queue":"${queueName(i % size.queues)}","class":"${className(i)}","args":[${i}],"jid":"${hex24("s", i)}","created_at":${nowMs}}`,
    (i) => score(nowMs / 1000 + 3600 + i * 0.75),
  );
  await seedQueues(redis, size);
  await seedProcesses(redis, size.processes, size.jobsPerProcess, size.queues);
}

/** The queues and their jobs (every page's summary bar reads each queue's length). */
export async function seedQueues(redis: Redis, size: FleetSize): Promise<void> {
  const nowMs = Date.now();
  let pipe = redis.pipeline();
  for (let q = 0; q < size.queues; q++) {
    pipe.sadd("queues", queueName(q));
    const jobs: string[] = [];
    for (let j = 0; j < size.jobsPerQueue; j++)
      jobs.push(
        `{"retry":true,"queue":"${queueName(q)}","args":[${j}],"class":"${className(q + j)}","jid":"${hex24("q", q * size.jobsPerQueue + j)}","created_at":${nowMs - 60_000},"enqueued_at":${nowMs - 60_000 + j}}`,
      );
    pipe.lpush(`queue:${queueName(q)}`, ...jobs);
    if (q % 50 === 49) {
      await pipe.exec();
      pipe = redis.pipeline();
    }
  }
  await pipe.exec();
}

/** Identity of process `p`: 100 hosts, Sidekiq's "<hostname>:<pid>:<12 hex>". */
export const identityOf = (p: number) =>
  `worker-${p % 100}.ops.internal:${10_000 + p}:${(p * 2_654_435_761).toString(16).slice(-12).padStart(12, "0")}`;

/** `processes` and the processes' heartbeat hashes and `:work` hashes, as Sidekiq 8.1.7's heartbeat writes them (no expiry: they stay alive for the run). */
export async function seedProcesses(redis: Redis, count: number, jobsEach: number, queues: number): Promise<void> {
  const nowMs = Date.now();
  const now = nowMs / 1000;
  let pipe = redis.pipeline();
  for (let p = 0; p < count; p++) {
    const id = identityOf(p);
    const host = id.split(":")[0]!;
    const qs = [queueName(p % queues), queueName((p + 1) % queues), "default"];
    const weights = qs.map((q) => `"${q}":0`).join(",");
    const info = `{"hostname":"${host}","started_at":${now - 3600 - p},"pid":${10_000 + p},"tag":"ops","capsules":{"default":{"concurrency":${jobsEach * 2},"mode":"strict","weights":{${weights}}}},"queues":[${qs.map((q) => `"${q}"`).join(",")}],"weights":[{${weights}}],"labels":[],"identity":"${id}","version":"8.1.7","embedded":false}`;
    pipe.sadd("processes", id);
    pipe.hset(id, {
      rtt_us: "44",
      rss: String(150_000 + (p % 1000)),
      info,
      concurrency: String(jobsEach * 2),
      busy: String(jobsEach),
      quiet: "false",
      beat: String(now),
    });
    const work: string[] = [];
    for (let t = 0; t < jobsEach; t++) {
      const i = p * jobsEach + t;
      const payload = JSON.stringify(
        `{"retry":true,"queue":"${qs[0]}","args":[${i}],"class":"${className(i)}","jid":"${hex24("b", i)}","created_at":${nowMs - 5000},"enqueued_at":${nowMs - 5000}}`,
      );
      work.push(
        (p * 131 + t * 7).toString(36),
        `{"queue":"${qs[0]}","payload":${payload},"run_at":${Math.floor(now) - ((i * 7919) % 3600)}}`,
      );
    }
    if (work.length > 0) pipe.hset(`${id}:work`, ...work);
    if (p % 500 === 499) {
      await pipe.exec();
      pipe = redis.pipeline();
    }
  }
  await pipe.exec();
}

/** Removes every process and its work hash (before seeding another fleet). */
export async function clearProcesses(redis: Redis): Promise<void> {
  const ids = await redis.smembers("processes");
  for (let at = 0; at < ids.length; at += 1000) {
    const batch = ids.slice(at, at + 1000);
    await redis.unlink(...batch, ...batch.map((id) => `${id}:work`));
  }
  await redis.unlink("processes");
}
