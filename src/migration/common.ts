// What every migration tool shares: finding Sidekiq's keys, reading lists and
// sorted sets page by page as raw bytes, telling a job's class (ActiveJob by
// `wrapped`), and the Lua scripts that replace one payload atomically.
//
// Reads are at-least-once under live traffic: a list is paged from its head
// with positive indices (Sidekiq LPUSHes at the head, which only shifts
// elements towards pages not read yet, and BRPOPs at the tail, which moves
// nothing), and sorted sets are read with ZSCAN (every member present for the
// whole scan is returned at least once). A page may therefore show an element
// twice; callers de-duplicate, and every write re-checks the element in Redis.
import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { execReplies } from "../redis/replies.js";
import { JobRecord } from "../wire/job-record.js";

export const QUEUE_PREFIX = "queue:";
/** Sidekiq's sorted sets of jobs. */
export const JOB_SETS = ["schedule", "retry", "dead"] as const;
export type JobSet = (typeof JOB_SETS)[number];

/** Both ActiveJob wrapper classes (Rails' adapter before Sidekiq 8, Sidekiq's own from 8.0). */
export const ACTIVEJOB_WRAPPER_CLASSES: ReadonlySet<string> = new Set([
  "Sidekiq::ActiveJob::Wrapper",
  "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
]);

/** Progress of long work, for a percentage line. `total` may grow while the work runs. */
export interface Progress {
  phase: string;
  key?: string;
  done: number;
  total: number;
}
export type ProgressFn = (p: Progress) => void;

const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The bytes as a string when they are valid UTF-8 (so writing the string back gives the same bytes). */
export function utf8OrUndefined(b: Buffer): string | undefined {
  try {
    return UTF8.decode(b);
  } catch {
    return undefined;
  }
}

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
  const klass = record.get("class");
  if (typeof klass !== "string" || klass === "") return undefined;
  const wrapped = record.get("wrapped");
  const activeJob = ACTIVEJOB_WRAPPER_CLASSES.has(klass) && typeof wrapped === "string";
  const queue = record.get("queue");
  const jid = record.get("jid");
  return {
    className: activeJob ? (wrapped as string) : klass,
    activeJob,
    ...(typeof queue === "string" ? { queue } : {}),
    ...(typeof jid === "string" ? { jid } : {}),
  };
}

/** Parses bytes into a JobRecord, or undefined (invalid UTF-8, not one JSON object). */
export function parseRecord(b: Buffer): { text: string; record: JobRecord } | undefined {
  const text = utf8OrUndefined(b);
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
  const names = new Set<string>(await redis.smembers("queues"));
  for (const k of await scanKeys(redis, `${QUEUE_PREFIX}*`)) names.add(k.slice(QUEUE_PREFIX.length));
  for (const n of extra) names.add(n);
  return [...names].sort();
}

/** The `queue:*` keys that hold a list now, optionally limited to some queue names. */
export async function queueLists(redis: Redis, only?: readonly string[]): Promise<string[]> {
  const keys = only?.length
    ? only.map((q) => QUEUE_PREFIX + q)
    : (await queueNames(redis)).map((q) => QUEUE_PREFIX + q);
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

// ---------------------------------------------------------------------------
// Lua: each call declares every key it touches (KEYS), so it also runs where
// undeclared keys are refused (Valkey/Redis cluster-safe scripting, Dragonfly).

/**
 * Replaces list elements in place: for each (hint, old, new), finds `old` at
 * `hint + drift` (drift: how far the previous element had moved, by pushes at
 * the head), else within `window` of it, else anywhere from `window` before it
 * to the tail (LPOS from the tail, bounded by MAXLEN; a chunked scan on Redis
 * < 6.0.6), and LSETs `new` there. Pushes only move elements towards the tail,
 * so an element not found there was popped by a worker, deleted or rewritten
 * meanwhile: it is left alone (and an element shifted the other way by a mass
 * LREM is left for the next pass). The bound keeps each miss as cheap as the
 * element's distance from the tail, where workers pop.
 * Returns one status per triple (1 replaced, 0 gone), then the last drift.
 */
export const LUA_LIST_REPLACE = `
local key = KEYS[1]
local drift = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local out = {}
local function find(old, guess)
  if guess >= 0 and redis.call("LINDEX", key, guess) == old then return guess end
  local from = guess - window
  if from < 0 then from = 0 end
  local items = redis.call("LRANGE", key, from, guess + window)
  local best
  for j = 1, #items do
    if items[j] == old then
      local p = from + j - 1
      if best == nil or math.abs(p - guess) < math.abs(best - guess) then best = p end
    end
  end
  if best then return best end
  local len = redis.call("LLEN", key)
  if from >= len then return nil end
  local r = redis.pcall("LPOS", key, old, "RANK", -1, "MAXLEN", len - from)
  if type(r) == "number" then return r end
  if type(r) == "table" and r.err then
    local i = from
    while i < len do
      local chunk = redis.call("LRANGE", key, i, i + 999)
      for j = 1, #chunk do
        if chunk[j] == old then return i + j - 1 end
      end
      i = i + 1000
    end
  end
  return nil
end
for i = 3, #ARGV, 3 do
  local hint = tonumber(ARGV[i])
  local pos = find(ARGV[i + 1], hint + drift)
  if pos then
    redis.call("LSET", key, pos, ARGV[i + 2])
    drift = pos - hint
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[#out + 1] = drift
return out`;

/**
 * Replaces sorted-set members in place, keeping each one's score: for each
 * (old, new), if `old` is still a member and `new` is not, ZREM old and ZADD
 * new with old's score. Returns one status per pair: 1 replaced, 0 gone,
 * 2 conflict (`new` already a member: merging them would lose a job).
 */
export const LUA_ZSET_REPLACE = `
local key = KEYS[1]
local out = {}
for i = 1, #ARGV, 2 do
  local score = redis.call("ZSCORE", key, ARGV[i])
  if not score then
    out[#out + 1] = 0
  elseif redis.call("ZSCORE", key, ARGV[i + 1]) then
    out[#out + 1] = 2
  else
    redis.call("ZREM", key, ARGV[i])
    redis.call("ZADD", key, score, ARGV[i + 1])
    out[#out + 1] = 1
  end
end
return out`;

/**
 * Moves list elements to another queue: for each (old, new), LREM one `old`
 * (nearest the tail, so the oldest copy) from the source and, only if one was
 * removed, LPUSH `new` onto the destination; SADD the destination's name to
 * `queues` when anything moved. Returns one status per pair: 1 moved, 0 gone.
 */
export const LUA_LIST_MOVE = `
local src, dst, queues = KEYS[1], KEYS[2], KEYS[3]
local out = {}
local any = false
for i = 2, #ARGV, 2 do
  if redis.call("LREM", src, -1, ARGV[i]) == 1 then
    redis.call("LPUSH", dst, ARGV[i + 1])
    any = true
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if any then redis.call("SADD", queues, ARGV[1]) end
return out`;

type Arg = string | Buffer | number;
export interface MigrationCommands {
  listReplace(key: string, drift: number, window: number, ...triples: Arg[]): Promise<number[]>;
  zsetReplace(key: string, ...pairs: Arg[]): Promise<number[]>;
  listMove(src: string, dst: string, queuesKey: string, dstName: string, ...pairs: Arg[]): Promise<number[]>;
}

const DEFINED = Symbol.for("sidekiq-bridge.migration.commands");

/** The scripts as commands on this connection (EVALSHA, reloaded on NOSCRIPT by ioredis). */
export function commands(redis: Redis): MigrationCommands {
  const r = redis as Redis & Record<string | symbol, unknown>;
  if (!r[DEFINED]) {
    redis.defineCommand("bridgeMigListReplace", { numberOfKeys: 1, lua: LUA_LIST_REPLACE });
    redis.defineCommand("bridgeMigZsetReplace", { numberOfKeys: 1, lua: LUA_ZSET_REPLACE });
    redis.defineCommand("bridgeMigListMove", { numberOfKeys: 3, lua: LUA_LIST_MOVE });
    r[DEFINED] = true;
  }
  const call =
    (name: string) =>
    (...args: Arg[]) =>
      (r[name] as (...a: Arg[]) => Promise<number[]>).apply(redis, args);
  return {
    listReplace: call("bridgeMigListReplace") as MigrationCommands["listReplace"],
    zsetReplace: call("bridgeMigZsetReplace") as MigrationCommands["zsetReplace"],
    listMove: call("bridgeMigListMove") as MigrationCommands["listMove"],
  };
}

/** Splits an array into chunks of n. */
export function chunks<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}
