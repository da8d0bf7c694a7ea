// What every part of the API shares: the Redis connection, the Sidekiq release
// whose Ruby API rules it reproduces, and the client that re-pushes jobs
// (retry, add to queue). `SidekiqApi` (sidekiq-api.ts) is the implementation.
import type { Redis } from "ioredis";
import type { Client } from "../client/client.js";
import type { WireProfile } from "../wire/dialect.js";
import type { JobRecord } from "../wire/job-record.js";

export interface ApiContext {
  readonly redis: Redis;
  /**
   * The Sidekiq release whose `Sidekiq::API` this reproduces where releases
   * differ: the latency rule, the `process_cleanup` lock, the dead-set trim.
   */
  readonly rules: WireProfile;
  /**
   * The client that will push `record` (resolved before anything is removed,
   * so a dialect that cannot be determined fails without losing the job).
   */
  clientFor(record: JobRecord): Promise<Client>;
  /** Epoch milliseconds (a clock for tests). */
  now(): number;
}

/** Ruby's `String#to_i` for a Redis reply: leading integer, else 0. */
export function toI(v: string | null | undefined): number {
  if (v === null || v === undefined) return 0;
  const n = parseInt(v.trim(), 10);
  return Number.isFinite(n) ? n : 0;
}

/** Ruby's `String#to_f` for a Redis reply: leading number, else 0. */
export function toF(v: string | null | undefined): number {
  if (v === null || v === undefined) return 0;
  const n = parseFloat(v.trim());
  return Number.isFinite(n) ? n : 0;
}

/** Every member of a set, as `SSCAN` gives them (Ruby's `conn.sscan(key).to_a`). */
export async function sscanAll(redis: Redis, key: string): Promise<string[]> {
  const seen = new Set<string>();
  let cursor = "0";
  do {
    const [next, members] = await redis.sscan(key, cursor, "COUNT", 1000);
    for (const m of members) seen.add(m);
    cursor = next;
  } while (cursor !== "0");
  return [...seen];
}

/** Ruby's `String#<=>` (bytewise), for sorting identities and queue names as Ruby does. */
export function byteCompare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
