// Where a throttled job goes: strategy.rb#requeue_throttled. `:enqueue` puts
// the job as fetched back at the far end of its queue (LPUSH), or of the
// queue `to` names; `:schedule` pushes it again as a new job (a new jid) into
// the schedule set, for when a slot is expected (Client.enqueue_to_in).
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import type { PushItem } from "../../core/client/normalize.js";
import type { GateContext, GateVerdict } from "../../core/server/job-gate.js";
import type { JsonValue } from "../../core/wire/json-scan.js";
import { queueKey, queueNameOf } from "../../core/wire/keys.js";
import { payloadKeysWrittenBy } from "../../core/wire/sidekiq-payload-keys.js";
import type { Strategy } from "./strategy.js";

/**
 * What a pushed job gets anew (jid, times) or loses (retry state), as
 * Client.enqueue_to_in builds it from the class; the rest (the class's
 * options, the wrapper's class, middleware's keys) is carried.
 */
const NOT_CARRIED = payloadKeysWrittenBy("push", "stamp", "retry");

function call<T>(v: T | ((...a: JsonValue[]) => T), args: readonly JsonValue[]): T {
  return typeof v === "function" ? (v as (...a: JsonValue[]) => T)(...args) : v;
}

/** strategy.rb#calc_target_queue: the `to` queue, or the job's own when none (or an empty one). */
function targetQueue(strategy: Strategy, job: GateContext, args: readonly JsonValue[]): string {
  const to = strategy.spec.requeue.to;
  const t = to === undefined ? null : call(to, args);
  return t === null || t === undefined || t === "" ? queueKey(job.queue) : String(t);
}

export interface Requeue {
  redis: Redis;
  /** The worker's client (pushes in the fleet's format); undefined before the worker runs. */
  client: Client | undefined;
}

/**
 * Sends a throttled job back as the gem does. "hand-back" when it goes to
 * the far end of the queue it came from (the manager's own hand-back does
 * exactly the gem's LPUSH, from the working list atomically under reliable
 * fetch); "done" once it was pushed elsewhere (another queue, the schedule set).
 */
export async function requeueThrottled(r: Requeue, strategy: Strategy, job: GateContext): Promise<GateVerdict> {
  // The payload's args, as the gem reads them here (the wrapper's, for ActiveJob).
  const args = (job.record.get("args") ?? []) as JsonValue[];
  const how = call(strategy.spec.requeue.with, args);
  const target = targetQueue(strategy, job, args);
  if (how === "enqueue") {
    const key = target.startsWith("queue:") ? target : queueKey(target);
    if (key === queueKey(job.queue)) return "hand-back";
    await r.redis.lpush(key, job.job);
    return "done";
  }
  if (how !== "schedule") throw new Error(`unrecognized :with option ${String(how)}`);
  if (!r.client) return "hand-back";
  const interval = await strategy.retryIn(r.redis, args);
  const item: Record<string, JsonValue> = {};
  for (const k of job.record.keys()) if (!NOT_CARRIED.has(k)) item[k] = job.record.get(k)!;
  const now = Date.now() / 1000;
  const at = now + interval;
  await r.client.push({
    ...item,
    class: job.record.getString("class")!,
    args,
    queue: queueNameOf(target),
    // Client.enqueue_to_in: no `at` (straight to the queue) when the time has come.
    ...(at > now ? { at } : {}),
  } as PushItem);
  return "done";
}
