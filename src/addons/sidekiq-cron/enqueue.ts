// `Sidekiq::Cron::Job#enqueue!` for Node: push the job, then record
// `last_enqueue_time` and a `jid_history` entry (trimmed to the history size).
//
// A plain Sidekiq job is pushed as Ruby pushes a class it cannot constantize:
// the stored message with its args replaced (`Sidekiq::Client.push`). An
// ActiveJob class (`active_job` set on the job, or named by the caller) is
// enqueued as a Rails process with the class loaded enqueues it
// (`klass.set(queue:).perform_later(*args)`): the full ActiveJob payload.
import type { Redis } from "ioredis";
import { aj, AjValue } from "../../core/client/activejob.js";
import type { AddonPushClient } from "../pollers/claims.js";
import type { PushItem } from "../../core/client/normalize.js";
import { parseJson, type JsonValue } from "../../core/wire/json-scan.js";
import { RubyFloat, type RubyJsonValue, toRubyJson } from "../../core/wire/ruby-json.js";
import { CronJobError, formatHistoryTime, formatLastEnqueueTime, type CronJob } from "./cron-job.js";
import { jidHistoryKey, jobKey } from "./keys.js";

export interface EnqueueOptions {
  /** `cron_history_size` (default 10). */
  historySize?: number;
  /** Class names to enqueue through ActiveJob although their job has no `active_job` flag. */
  isActiveJob?: (className: string) => boolean;
}

const GLOBALID_KEY = "_sc_globalid";

function isPlainObject(v: unknown): v is { [k: string]: JsonValue } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `enqueue_args`: the arguments, plus the enqueue time as a float when `date_as_argument`. */
function enqueueArgs(job: CronJob, now: Date): RubyJsonValue[] {
  const base = Array.isArray(job.args) ? (job.args as RubyJsonValue[]) : [job.args as RubyJsonValue];
  return job.dateAsArgument ? [...base, new RubyFloat(now.getTime() / 1000)] : base;
}

/** ActiveJob arguments: `_sc_globalid` hashes become GlobalIDs, symbolized hashes keep Symbol keys. */
function activeJobArgs(job: CronJob, args: RubyJsonValue[]): unknown[] {
  const conv = (v: unknown, top: boolean): unknown => {
    if (Array.isArray(v)) return v.map((x) => conv(x, false));
    if (isPlainObject(v)) {
      const keys = Object.keys(v);
      if (keys.length === 1 && keys[0] === GLOBALID_KEY && typeof v[GLOBALID_KEY] === "string")
        return aj.globalId(v[GLOBALID_KEY]);
      const inner = Object.fromEntries(keys.map((k) => [k, conv(v[k], false)]));
      return top && job.symbolizeArgs ? aj.symbolKeys(inner) : inner;
    }
    return v;
  };
  return args.map((a) => (a instanceof RubyFloat || a instanceof AjValue ? a : conv(a, true)));
}

/** Pushes one cron job now and records it as the gem does; returns the jid (null if a middleware stopped it). */
export async function enqueueCronJob(
  redis: Redis,
  client: AddonPushClient,
  job: CronJob,
  options: EnqueueOptions = {},
  now = new Date(),
): Promise<string | null> {
  const jid = await pushCronJob(client, job, options, now);
  const record = cronEnqueueRecord(job, jid, options, now);
  await redis
    .multi()
    .hset(record.keys[0]!, "last_enqueue_time", formatLastEnqueueTime(now))
    .lpush(record.keys[1]!, record.args[2]!)
    .ltrim(record.keys[1]!, 0, Number(record.args[3]) - 1)
    .exec();
  return jid;
}

/** The push of `enqueue!` alone: the job, as the gem pushes it. */
export async function pushCronJob(
  client: AddonPushClient,
  job: CronJob,
  options: EnqueueOptions,
  now: Date,
): Promise<string | null> {
  const args = enqueueArgs(job, now);
  if (job.activeJob || options.isActiveJob?.(job.klass)) {
    const queue = job.queueNameWithPrefix(true);
    return (await client.activeJob(job.klass, { queue }).performLater(...activeJobArgs(job, args))).jid;
  }
  const message = parseJson(job.message);
  if (!isPlainObject(message)) throw new CronJobError(`its message is not a JSON object: ${job.message}`);
  const item = { ...message, args } as unknown as PushItem;
  if (typeof item.class !== "string" || item.class === "") item.class = job.klass;
  return client.push(item);
}

/**
 * The gem's record of a push at `now`, as pushAddonClaim's optional keys and
 * arguments: `last_enqueue_time` in the job's hash, a `jid_history` entry
 * (trimmed to the history size). Also sets the job's lastEnqueueTime.
 */
export function cronEnqueueRecord(
  job: CronJob,
  jid: string | null,
  options: EnqueueOptions,
  now: Date,
): { keys: string[]; args: Array<string | number> } {
  job.lastEnqueueTime = now;
  return {
    keys: [jobKey(job.name, job.namespace), jidHistoryKey(job.name, job.namespace)],
    args: [
      "last_enqueue_time",
      formatLastEnqueueTime(now),
      toRubyJson({ jid, enqueued: formatHistoryTime(now) }),
      options.historySize ?? 10,
    ],
  };
}
