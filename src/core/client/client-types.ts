// What the client (client.ts) and its job definitions (job.ts, activejob.ts)
// share, so that neither imports the other: the bulk item, the prepared push,
// and the client as a definition calls it.
import type { Redis } from "ioredis";
import type { WireProfile } from "../wire/dialect.js";
import type { RubyJsonValue } from "../wire/ruby-json.js";
import type { JobOptions, PushItem } from "./normalize.js";

/** A bulk push (`Sidekiq::Client.push_bulk`): one class, many argument lists, optional per-job `at`. */
export interface BulkItem extends JobOptions {
  class: string;
  /** One args array per job. */
  args: RubyJsonValue[][];
  /** Epoch seconds for all jobs, or one per job. Absolute, as in Sidekiq (not relative). */
  at?: number | number[];
  /** Spread the jobs randomly over this many seconds (at least 5), instead of `at`. */
  spreadInterval?: number;
  /** Jobs per round trip (default 1000, or 100 when scheduled). */
  batchSize?: number;
}

/** A payload ready to LPUSH onto `queue:<queue>` of `redis` (see Client#prepareRecord). */
export interface PreparedPush {
  redis: Redis;
  queue: string;
  json: string;
  jid: string | null;
}

/**
 * The client as a job definition calls it: the `Client` class of client.ts
 * implements it. It bears the class's name because it stands for it in the
 * definitions' public signatures.
 */
export interface Client {
  /** Pushes one job; returns its jid, or null when a middleware stopped it. */
  push(item: PushItem, classDefaults?: Readonly<JobOptions>): Promise<string | null>;
  /** Pushes many jobs of one class (Sidekiq's push_bulk); one jid per args array, null where a middleware stopped the job. */
  pushBulk(bulk: BulkItem, classDefaults?: Readonly<JobOptions>): Promise<Array<string | null>>;
  /** The wire profile the client writes for a queue. */
  profile(queue?: string): Promise<WireProfile>;
}
