// Reading and removing the gem's locks a page at a time, as its Web UI does
// (Digests#page, Lock, Changelog#page): never the whole digests set at once.
// Gem 8 keeps `<digest>`, `:QUEUED`, `:PRIMED`, `:LOCKED` (jid => time),
// `:INFO` (JSON) and changelog entries; gem 9 only `:LOCKED` (jid => metadata).
import type { Redis } from "ioredis";
import type { UniqueJobsConfig } from "./config.js";
import { deleteByDigest } from "./digests.js";
import { CHANGELOG, DIGESTS, EXPIRING_DIGESTS } from "./locksmith.js";

/** The most entries one lock's detail reads from a hash, list or the changelog. */
export const MAX_LOCK_DETAIL = 1000;

/** ZSCAN's COUNT hint for a filter: large, so a scan of 100,000 digests is a few dozen round trips. */
const SCAN_COUNT = 5000;

export interface LockEntry {
  digest: string;
  /** The digests set's score: when the lock was taken (epoch seconds). */
  since: number;
}

export interface LockSummary extends LockEntry {
  /** The lock type from `:INFO` (the gem writes it as "type"; its Web UI reads "lock"). */
  lockType: string | undefined;
  /** How many jids hold it (HLEN of `:LOCKED`). */
  locked: number;
}

export interface LockPage {
  total: number;
  locks: LockSummary[];
  /** The ZSCAN cursor to continue a filtered listing ("0": done); undefined for a ranked page. */
  cursor?: string;
}

export interface ChangelogEntry {
  digest?: string;
  job_id?: string;
  script?: string;
  message?: string;
  time?: number;
  [k: string]: unknown;
}

export interface LockDetail {
  digest: string;
  since: number | undefined;
  /** jid => value (gem 8: the time locked; gem 9: the lock's metadata JSON). */
  locked: Array<[jid: string, value: string]>;
  queued: string[];
  primed: string[];
  info: Record<string, unknown> | undefined;
  /** The stored `:INFO` when it is not a JSON object. */
  infoRaw: string | undefined;
  changelog: ChangelogEntry[];
}

/** A ZSCAN/HSCAN MATCH pattern for a plain substring (glob characters matched literally). */
export function substringPattern(text: string): string {
  return `*${text.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
}

function parseJsonObject(s: string | null | undefined): Record<string, unknown> | undefined {
  if (!s) return undefined;
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function summarize(redis: Redis, entries: LockEntry[]): Promise<LockSummary[]> {
  if (entries.length === 0) return [];
  const pipe = redis.pipeline();
  for (const e of entries) pipe.hlen(`${e.digest}:LOCKED`).get(`${e.digest}:INFO`);
  const r = (await pipe.exec()) ?? [];
  return entries.map((e, i) => {
    const [hErr, n] = r[2 * i] ?? [];
    const [iErr, info] = r[2 * i + 1] ?? [];
    const parsed = iErr ? undefined : parseJsonObject(info as string | null);
    const lockType = parsed?.type ?? parsed?.lock;
    return {
      ...e,
      locked: hErr ? 0 : Number(n ?? 0),
      lockType: typeof lockType === "string" ? lockType : undefined,
    };
  });
}

function pairs(flat: string[]): LockEntry[] {
  const out: LockEntry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push({ digest: flat[i]!, since: Number(flat[i + 1]) });
  return out;
}

/** The gem's two digest sets: `Digests` and `ExpiringDigests` (until_expired locks, scored by when they expire). */
export type DigestSet = typeof DIGESTS | typeof EXPIRING_DIGESTS;

/** Newest first, `count` from `offset` (ZREVRANGE with scores). */
export async function lockPage(
  redis: Redis,
  offset: number,
  count: number,
  set: DigestSet = DIGESTS,
): Promise<LockPage> {
  const [total, flat] = await Promise.all([
    redis.zcard(set),
    redis.zrevrange(set, offset, offset + count - 1, "WITHSCORES"),
  ]);
  return { total, locks: await summarize(redis, pairs(flat)) };
}

/**
 * The digests containing `text`, by ZSCAN from `cursor` until `count` matched
 * or the scan ended (`Digests#page` with a pattern, continued where a page stopped).
 */
export async function filteredLockPage(
  redis: Redis,
  text: string,
  cursor: string,
  count: number,
  set: DigestSet = DIGESTS,
): Promise<LockPage> {
  const pattern = substringPattern(text);
  const found: LockEntry[] = [];
  let next = cursor;
  do {
    const [c, flat] = await redis.zscan(set, next, "MATCH", pattern, "COUNT", SCAN_COUNT);
    next = c;
    found.push(...pairs(flat));
  } while (next !== "0" && found.length < count);
  return { total: await redis.zcard(set), locks: await summarize(redis, found), cursor: next };
}

/** Everything stored for one digest, each part bounded. */
export async function lockDetail(redis: Redis, digest: string, cfg: UniqueJobsConfig): Promise<LockDetail> {
  const locked: Array<[string, string]> = [];
  let cursor = "0";
  do {
    const [c, flat] = await redis.hscan(`${digest}:LOCKED`, cursor, "COUNT", 200);
    cursor = c;
    for (let i = 0; i + 1 < flat.length; i += 2) locked.push([flat[i]!, flat[i + 1]!]);
  } while (cursor !== "0" && locked.length < MAX_LOCK_DETAIL);
  const since = (await redis.zscore(DIGESTS, digest)) ?? (await redis.zscore(EXPIRING_DIGESTS, digest));
  const detail: LockDetail = {
    digest,
    since: since === null ? undefined : Number(since),
    locked: locked.slice(0, MAX_LOCK_DETAIL),
    queued: [],
    primed: [],
    info: undefined,
    infoRaw: undefined,
    changelog: [],
  };
  if (cfg.gem === 9) return detail;
  const [queued, primed, info] = await Promise.all([
    redis.lrange(`${digest}:QUEUED`, 0, MAX_LOCK_DETAIL - 1),
    redis.lrange(`${digest}:PRIMED`, 0, MAX_LOCK_DETAIL - 1),
    redis.get(`${digest}:INFO`),
  ]);
  detail.queued = queued;
  detail.primed = primed;
  detail.info = parseJsonObject(info);
  if (info && !detail.info) detail.infoRaw = info;
  // Lock#changelogs: the entries of this digest (matched as it is spelled inside the stored JSON).
  const inJson = JSON.stringify(digest).slice(1, -1);
  detail.changelog = (await changelogPage(redis, inJson, "0", MAX_LOCK_DETAIL, true)).entries.filter(
    (e) => e.digest === digest,
  );
  return detail;
}

export interface ChangelogPage {
  total: number;
  entries: ChangelogEntry[];
  cursor: string;
}

/** `Changelog#page`: entries containing `text` (all for ""), by ZSCAN from `cursor`, newest first within the page. */
export async function changelogPage(
  redis: Redis,
  text: string,
  cursor: string,
  count: number,
  untilDone = false,
): Promise<ChangelogPage> {
  const pattern = text === "" ? "*" : substringPattern(text);
  const entries: ChangelogEntry[] = [];
  let next = cursor;
  do {
    const [c, members] = await redis.zscan(CHANGELOG, next, "MATCH", pattern, "COUNT", SCAN_COUNT);
    next = c;
    for (let i = 0; i < members.length; i += 2) {
      const e = parseJsonObject(members[i]);
      if (e) entries.push(e as ChangelogEntry);
    }
  } while (next !== "0" && entries.length < count && (untilDone || entries.length === 0));
  entries.sort((a, b) => Number(b.time ?? 0) - Number(a.time ?? 0));
  return { total: await redis.zcard(CHANGELOG), entries: entries.slice(0, count), cursor: next };
}

/** The Web UI's delete: `delete_by_digest` on the digests and the expiring digests. */
export async function deleteLock(redis: Redis, digest: string, cfg: UniqueJobsConfig): Promise<number> {
  const n = await deleteByDigest(redis, digest, cfg);
  await redis.zrem(EXPIRING_DIGESTS, digest);
  return n;
}

/** Delete All: every digest, scanned a batch at a time (the gem reads the whole set at once). */
export async function deleteAllLocks(redis: Redis, cfg: UniqueJobsConfig): Promise<number> {
  let deleted = 0;
  for (const key of [DIGESTS, EXPIRING_DIGESTS]) {
    for (;;) {
      const batch = await redis.zrange(key, 0, 499);
      if (batch.length === 0) break;
      for (const digest of batch) {
        await deleteLock(redis, digest, cfg);
        deleted++;
      }
    }
  }
  return deleted;
}
