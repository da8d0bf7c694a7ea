// Typed job definitions: the Node face of a Ruby job class, with
// perform_async / perform_in / perform_at / perform_bulk and set(...).
import type { RubyJsonValue } from "../wire/ruby-json.js";
import type { BulkItem, Client } from "./client-types.js";
import { DEFAULT_JOB_OPTIONS, type JobHash, type JobOptions, type PushItem } from "./normalize.js";

/** Per-push options of `set(...)`: `sidekiq_options` plus Sidekiq's `wait`/`wait_until`. */
export interface SetOptions extends JobOptions {
  /** Run this many seconds from now (Sidekiq's `set(wait:)`). */
  wait?: number;
  /** Run at this epoch time in seconds (Sidekiq's `set(wait_until:)`). */
  wait_until?: number;
}

/** Options of `performBulk`, as `perform_bulk`: `at` (one time or one per job), `spreadInterval`, `batchSize`. */
export interface BulkOptions {
  at?: number | number[];
  spreadInterval?: number;
  batchSize?: number;
}

/**
 * Sidekiq's `at(interval)`: below 1e9 an interval in seconds from now, else an
 * epoch time in seconds; a time not in the future means "push now" (undefined).
 */
export function scheduleAt(interval: number | Date, now = Date.now() / 1000): number | undefined {
  const int = interval instanceof Date ? interval.getTime() / 1000 : Number(interval);
  if (!Number.isFinite(int)) throw new TypeError(`not a time or interval: ${String(interval)}`);
  const ts = int < 1_000_000_000 ? now + int : int;
  return ts > now ? ts : undefined;
}

/** A Sidekiq job class to enqueue (`Sidekiq::Job`'s `perform_async`, `perform_in`, `perform_at`, `set`, `perform_bulk`); from `client.job(name)`. */
export class JobDefinition<A extends RubyJsonValue[] = RubyJsonValue[]> {
  constructor(
    private readonly client: Client,
    readonly className: string,
    /** The Ruby class's sidekiq_options, mirrored here (queue, retry, backtrace, ...). */
    readonly classOptions: JobOptions = {},
    private readonly setOpts: JobHash = {},
  ) {}

  private get defaults(): JobOptions {
    return { ...DEFAULT_JOB_OPTIONS, ...this.classOptions };
  }

  /** Per-push options, as `MyJob.set(queue: "critical")`. */
  set(options: SetOptions): JobDefinition<A> {
    const { wait, wait_until, ...rest } = options;
    const opts: JobHash = { ...this.setOpts, ...rest };
    const interval = wait_until ?? wait;
    if (interval !== undefined) {
      const at = scheduleAt(interval);
      if (at !== undefined) opts.at = at;
    }
    return new JobDefinition<A>(this.client, this.className, this.classOptions, opts);
  }

  performAsync(...args: A): Promise<string | null> {
    return this.client.push({ ...this.setOpts, args, class: this.className } as PushItem, this.defaults);
  }

  /** In `interval` seconds (or at an epoch time in seconds if it is 1e9 or more). */
  performIn(interval: number | Date, ...args: A): Promise<string | null> {
    const at = scheduleAt(interval);
    if (Object.keys(this.setOpts).length > 0) {
      const opts = { ...this.setOpts };
      if (at !== undefined) opts.at = at;
      return new JobDefinition<A>(this.client, this.className, this.classOptions, opts).performAsync(...args);
    }
    const item: PushItem = { class: this.className, args };
    if (at !== undefined) item.at = at;
    return this.client.push(item, this.defaults);
  }

  performAt(time: number | Date, ...args: A): Promise<string | null> {
    return this.performIn(time, ...args);
  }

  performBulk(args: A[], options: BulkOptions = {}): Promise<Array<string | null>> {
    const bulk: BulkItem = { ...(this.setOpts as JobOptions), class: this.className, args, ...options };
    return this.client.pushBulk(bulk, this.defaults);
  }
}
