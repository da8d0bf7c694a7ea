// `Scheduler#enqueue_job` for Node: the schedule's config becomes the job.
// `args` is made an Array (Ruby's `Array(args)`: nil is [], a scalar [x]) unless
// it is a Hash; with `include_metadata` the hash {"scheduled_at": <float>} is
// appended; then the rufus keys (description, at, cron, every, in, interval,
// enabled) are dropped and the rest, every Sidekiq option and unknown key
// included, is pushed as `Sidekiq::Client.push` would push it. An ActiveJob
// class is enqueued through ActiveJob (`klass.new(*args).enqueue(queue:)`).
import { aj } from "../../core/client/activejob.js";
import type { AddonPushClient } from "../pollers/claims.js";
import type { PushItem } from "../../core/client/normalize.js";
import { RubyFloat } from "../../core/wire/ruby-json.js";
import { RUFUS_METADATA_KEYS, type ScheduleConfig, type ScheduleEntry } from "./schedule-entry.js";

export interface EnqueueOptions {
  /** Classes to enqueue through ActiveJob (the worker's registered ActiveJob classes). */
  isActiveJob?: (className: string) => boolean;
}

/** Ruby's `Array(x)`. */
function rubyArray(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

const isHash = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** The job's arguments at `time` (epoch ms): `prepare_arguments` and `arguments_with_metadata`. */
function scheduleArgs(config: ScheduleConfig, time: number): unknown {
  const args = isHash(config.args) ? config.args : rubyArray(config.args);
  const meta = config.include_metadata;
  if (meta === undefined || meta === null || meta === false) return args;
  const metadata = { scheduled_at: new RubyFloat(Math.round(time) / 1000) };
  return Array.isArray(args) ? [...args, metadata] : [args, metadata];
}

/** The pushed item: the config without the rufus keys and `include_metadata`, with its arguments. */
export function scheduleItem(entry: ScheduleEntry, time: number): ScheduleConfig {
  const item: ScheduleConfig = {};
  for (const [k, v] of Object.entries(entry.config)) {
    if ((RUFUS_METADATA_KEYS as readonly string[]).includes(k) || k === "include_metadata") continue;
    item[k] = k === "args" ? scheduleArgs(entry.config, time) : v;
  }
  if (!("args" in item)) item.args = scheduleArgs(entry.config, time);
  return item;
}

/** Pushes one schedule's job for `time` (epoch ms); returns the jid (null if a middleware stopped it). */
export async function enqueueSchedule(
  client: AddonPushClient,
  entry: ScheduleEntry,
  time: number,
  options: EnqueueOptions = {},
): Promise<string | null> {
  const item = scheduleItem(entry, time);
  const className = entry.className;
  if (className && options.isActiveJob?.(className)) {
    const args = item.args;
    const queue = typeof entry.config.queue === "string" ? { queue: entry.config.queue } : {};
    const job = client.activeJob(className, queue);
    // `initialize_active_job`: an Array spreads, a Hash is one argument (keywords with keyword_argument).
    const list = Array.isArray(args)
      ? args
      : [entry.config.keyword_argument ? aj.kwargs(args as Record<string, unknown>) : args];
    return (await job.performLater(...list)).jid;
  }
  return client.push(item as unknown as PushItem);
}
