// What every migration tool shares: finding Sidekiq's keys, reading lists and
// sorted sets page by page as raw bytes, and telling a job's class (ActiveJob
// by `wrapped`). The Lua scripts that replace one payload atomically are in
// src/core/redis/scripts/ (replace-list-elements, replace-sorted-set-members,
// move-list-elements).
//
// Reads are at-least-once under live traffic: a list is paged from its head
// with positive indices (Sidekiq LPUSHes at the head, which only shifts
// elements towards pages not read yet, and BRPOPs at the tail, which moves
// nothing), and sorted sets are read with ZSCAN (every member present for the
// whole scan is returned at least once). A page may therefore show an element
// twice; callers de-duplicate, and every write re-checks the element in Redis.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { execReplies } from "../../core/redis/replies.js";
import { JobRecord } from "../../core/wire/job-record.js";
import { QUEUE_PREFIX, QUEUES_KEY, queueKey, queueNameOf } from "../../core/wire/keys.js";
import { ACTIVEJOB_WRAPPER_CLASSES, strictUtf8 } from "../../core/wire/sidekiq-constants.js";

/** Sidekiq's sorted sets of jobs, as the migration tools name them. */
export { JOB_SET_KEYS as JOB_SETS, type JobSetKey as JobSet } from "../../core/wire/keys.js";

/** Progress of long work, for a percentage line. `total` may grow while the work runs. */
export interface Progress {
  phase: string;
  key?: string;
  done: number;
  total: number;
}
/** Called with each progress report of a long migration step. */
export type ProgressFn = (p: Progress) => void;

/** A short digest of a payload, for de-duplicating re-read elements without keeping them. */
export function fingerprint(b: Buffer | string): string {
  return createHash("sha1").update(b).digest("base64");
}

export interface JobIdentity {
  /** The class a handler is registered for: `wrapped` for ActiveJob, else `class`. */
  className: string;
  activeJob: boolean;
  queue?: string;
  jid?: string;
}

/** The job's routing class, or undefined when the payload is not a job object. */
export function identify(record: JobRecord): JobIdentity | undefined {
  const className = record.get("class");
  if (typeof className !== "string" || className === "") return undefined;
  const wrapped = record.get("wrapped");
  const activeJob = ACTIVEJOB_WRAPPER_CLASSES.has(className) && typeof wrapped === "string";
  const queue = record.get("queue");
  const jid = record.get("jid");
  return {
    className: activeJob ? (wrapped as string) : className,
    activeJob,
    ...(typeof queue === "string" ? { queue } : {}),
    ...(typeof jid === "string" ? { jid } : {}),
  };
}

/** Parses bytes into a JobRecord, or undefined (invalid UTF-8, not one JSON object). */
export function parseRecord(b: Buffer): { text: string; record: JobRecord } | undefined {
  const text = strictUtf8(b);
  if (text === undefined) return undefined;
  try {
    return { text, record: JobRecord.parse(text) };
  } catch {
    return undefined;
  }
}

/** Every key matching a glob, by SCAN (never KEYS), sorted. */
export async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const out = new Set<string>();
  let cursor = "0";
  do {
    const [next, batch] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    for (const k of batch) out.add(k);
  } while (cursor !== "0");
  return [...out].sort();
}

/** The Redis type of each key (`none` when absent). */
export async function keyTypes(redis: Redis, keys: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (keys.length === 0) return out;
  const pipe = redis.pipeline();
  for (const k of keys) pipe.type(k);
  const types = execReplies(await pipe.exec(), "key types");
  keys.forEach((k, i) => out.set(k, String(types[i])));
  return out;
}

/**
 * Queue names known to this Redis: the `queues` set, every `queue:*` list, and
 * any extra names given. Sorted.
 */
export async function queueNames(redis: Redis, extra: Iterable<string> = []): Promise<string[]> {
  const names = new Set<string>(await redis.smembers(QUEUES_KEY));
  for (const k of await scanKeys(redis, `${QUEUE_PREFIX}*`)) names.add(queueNameOf(k));
  for (const n of extra) names.add(n);
  return [...names].sort();
}

/** The `queue:*` keys that hold a list now, optionally limited to some queue names. */
export async function queueLists(redis: Redis, only?: readonly string[]): Promise<string[]> {
  const keys = (only?.length ? only : await queueNames(redis)).map(queueKey);
  const types = await keyTypes(redis, keys);
  return keys.filter((k) => types.get(k) === "list");
}

export interface ListPage {
  /** Index of items[0] when the page was read. */
  start: number;
  items: Buffer[];
}

/** Pages of a list from its head, as raw bytes, until a page comes back short. */
export async function* listPages(redis: Redis, key: string, pageSize = 1000): AsyncGenerator<ListPage> {
  for (let start = 0; ; start += pageSize) {
    const items = await redis.lrangeBuffer(key, start, start + pageSize - 1);
    if (items.length > 0) yield { start, items };
    if (items.length < pageSize) return;
  }
}

export interface ZEntry {
  member: Buffer;
  /** The score exactly as Redis printed it. */
  score: string;
}

/** Every member of a sorted set with its score, by ZSCAN (duplicates possible). */
export async function* zsetPages(redis: Redis, key: string, count = 1000): AsyncGenerator<ZEntry[]> {
  let cursor = "0";
  do {
    const [next, flat] = await redis.zscanBuffer(key, cursor, "COUNT", count);
    cursor = next.toString();
    const page: ZEntry[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) page.push({ member: flat[i]!, score: flat[i + 1]!.toString() });
    if (page.length > 0) yield page;
  } while (cursor !== "0");
}

/** Splits an array into chunks of n. */
export function chunks<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}
