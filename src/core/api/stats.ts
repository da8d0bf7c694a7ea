// Ruby's `Sidekiq::Stats`: the same reads (fetch_stats_fast! then
// fetch_stats_slow!) and `queue_summaries`, with latency by the rules of the
// API's release (latency.ts).
import { sscanAll, toI, type ApiContext } from "./context.js";
import { execReplies } from "../redis/replies.js";
import {
  DEAD_KEY,
  PAUSED_KEY,
  PROCESSES_KEY,
  QUEUES_KEY,
  queueKey,
  RETRY_KEY,
  SCHEDULE_KEY,
  STAT_FAILED_KEY,
  STAT_PROCESSED_KEY,
} from "../wire/keys.js";
import { jobLatency, latencyRuleFor } from "./latency.js";

/** `Sidekiq::Stats`: processed and failed counts, the sets' sizes, enqueued jobs and the oldest queue latency. */
export interface StatsSnapshot {
  /** GET stat:processed (`to_i`). */
  processed: number;
  failed: number;
  /** ZCARD schedule. */
  scheduledSize: number;
  retrySize: number;
  deadSize: number;
  /** SCARD processes (not pruned: as Ruby, it may count a process that just died). */
  processesSize: number;
  /** Sum of every process's `busy` field. */
  workersSize: number;
  /** Sum of LLEN over the `queues` set. */
  enqueued: number;
  /** Latency in seconds of queue:default. */
  defaultQueueLatency: number;
}

/** One queue's size, latency and paused flag, as `sidekiq-bridge queues` prints them. */
export interface QueueSummary {
  name: string;
  size: number;
  /** Seconds since the oldest job was enqueued (0 when empty). */
  latency: number;
  /** Member of the `paused` set (Sidekiq Pro); always false with OSS Sidekiq. */
  paused: boolean;
}

/**
 * `Sidekiq::Stats.new` with every value fetched (`fetch_stats!`). A caller
 * that reads every process's `busy` field anyway (Busy) passes the sum as
 * `workersSize`, and the fleet is not read a second time.
 */
export async function fetchStats(
  ctx: ApiContext,
  opts: { workersSize?: Promise<number> } = {},
): Promise<StatsSnapshot> {
  const { redis } = ctx;
  const fast = execReplies(
    await redis
      .pipeline()
      .get(STAT_PROCESSED_KEY)
      .get(STAT_FAILED_KEY)
      .zcard(SCHEDULE_KEY)
      .zcard(RETRY_KEY)
      .zcard(DEAD_KEY)
      .scard(PROCESSES_KEY)
      .lindex(queueKey("default"), -1)
      .exec(),
    "stats",
  );
  const defaultQueueLatency = jobLatency(fast[6] as string | null, latencyRuleFor(ctx.rules), ctx.now());

  const processes = opts.workersSize ? [] : await sscanAll(redis, PROCESSES_KEY);
  const queues = await sscanAll(redis, QUEUES_KEY);
  let workersSize = opts.workersSize ? await opts.workersSize : 0;
  let enqueued = 0;
  if (processes.length + queues.length > 0) {
    const pipe = redis.pipeline();
    for (const p of processes) pipe.hget(p, "busy");
    for (const q of queues) pipe.llen(queueKey(q));
    const slow = execReplies(await pipe.exec(), "stats");
    slow.forEach((v, i) => {
      if (i < processes.length) workersSize += toI(v as string | null);
      else enqueued += Number(v);
    });
  }
  return {
    processed: toI(fast[0] as string | null),
    failed: toI(fast[1] as string | null),
    scheduledSize: Number(fast[2]),
    retrySize: Number(fast[3]),
    deadSize: Number(fast[4]),
    processesSize: Number(fast[5]),
    workersSize,
    enqueued,
    defaultQueueLatency,
  };
}

/**
 * `Stats#queue_summaries` (8.x): name, size, latency and paused for every
 * queue in the `queues` set, largest first (ties by name, where Ruby's
 * `sort_by` leaves the order unspecified).
 */
export async function queueSummaries(ctx: ApiContext): Promise<QueueSummary[]> {
  const { redis } = ctx;
  const queues = await sscanAll(redis, QUEUES_KEY);
  if (queues.length === 0) return [];
  const pipe = redis.pipeline();
  for (const q of queues) pipe.llen(queueKey(q)).lindex(queueKey(q), -1).sismember(PAUSED_KEY, q);
  const res = execReplies(await pipe.exec(), "queue summaries");
  const rule = latencyRuleFor(ctx.rules);
  const now = ctx.now();
  const out = queues.map((name, i) => ({
    name,
    size: Number(res[i * 3]),
    latency: jobLatency(res[i * 3 + 1] as string | null, rule, now),
    paused: Number(res[i * 3 + 2]) > 0,
  }));
  return out.sort((a, b) => b.size - a.size || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
