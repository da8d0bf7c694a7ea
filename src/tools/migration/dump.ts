// `export`: Sidekiq's queues and job sets (and optionally stats) to a
// MessagePack file (see export-format.ts), byte for byte.
//
// Each key is read with one command inside a MULTI with its PTTL, so each key
// is a consistent snapshot of itself; keys are read one after another, so a
// fleet that keeps running moves jobs between keys during the export. For a
// point-in-time copy, quiet the fleet (and stop producers) first.
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { rm } from "node:fs/promises";
import type { Writable } from "node:stream";
import type { Redis } from "ioredis";
import { execReplies } from "../../core/redis/replies.js";
import {
  DEAD_KEY,
  QUEUE_PREFIX,
  QUEUES_KEY,
  RETRY_KEY,
  SCHEDULE_KEY,
  STAT_KEYS_PATTERN,
} from "../../core/wire/keys.js";
import {
  digestEntries,
  entryCount,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  itemRecords,
  newPackr,
  redactUrl,
  type ExportRecord,
  type KeyType,
} from "./export-format.js";
import { keyTypes, scanKeys, type ProgressFn } from "./stored-jobs.js";

/** What an export takes by default: every queue, the queue registry and the job sets. */
export const DEFAULT_EXPORT_PATTERNS = [`${QUEUE_PREFIX}*`, QUEUES_KEY, SCHEDULE_KEY, RETRY_KEY, DEAD_KEY] as const;
/** With `stats`: Sidekiq's counters (stat:processed, stat:failed and their daily keys). */
export const STATS_PATTERNS = [STAT_KEYS_PATTERN] as const;

/** Options of `exportToFile` / `exportToStream`: `stats` keys, more key patterns, the source's name, progress. */
export interface ExportOptions {
  /** Add `stat:*`. */
  stats?: boolean;
  /** More key patterns (globs) to include. */
  include?: string[];
  /** For the header: where this is from (credentials are removed). */
  source?: string;
  progress?: ProgressFn;
}

export interface ExportedKey {
  key: string;
  type: KeyType;
  count: number;
}

/** What an export wrote: the keys, entries, bytes and time taken. */
export interface ExportSummary {
  keys: ExportedKey[];
  entries: number;
  bytes: number;
  durationMs: number;
}

export function exportPatterns(o: Pick<ExportOptions, "stats" | "include">): string[] {
  return [...DEFAULT_EXPORT_PATTERNS, ...(o.stats ? STATS_PATTERNS : []), ...(o.include ?? [])];
}

/** The keys an export (or the emptiness check of an import) covers, sorted. */
export async function selectKeys(redis: Redis, patterns: readonly string[]): Promise<string[]> {
  const keys = new Set<string>();
  for (const p of patterns) {
    if (/[*?[]/.test(p)) for (const k of await scanKeys(redis, p)) keys.add(k);
    else if ((await redis.exists(p)) === 1) keys.add(p);
  }
  return [...keys].sort();
}

/** One key's entries as the file stores them, with its TTL, read atomically. */
export async function readKey(
  redis: Redis,
  key: string,
  type: KeyType,
): Promise<{ items: Array<Buffer | string>; pttl: number } | undefined> {
  const tx = redis.multi();
  tx.type(key);
  tx.pttl(key);
  switch (type) {
    case "list":
      tx.lrangeBuffer(key, 0, -1);
      break;
    case "zset":
      tx.zrangeBuffer(key, 0, -1, "WITHSCORES");
      break;
    case "set":
      tx.smembersBuffer(key);
      break;
    case "hash":
      tx.hgetallBuffer(key);
      break;
    case "string":
      tx.getBuffer(key);
      break;
  }
  const res = execReplies(await tx.exec(), `reading ${key}`);
  const t = res[0];
  if (t === "none") return undefined; // gone since the scan
  if (t !== type) throw new Error(`${key} changed type from ${type} to ${String(t)} during the export`);
  const pttl = Number(res[1]);
  const data = res[2] as Buffer | Buffer[] | Record<string, Buffer> | null;
  let items: Array<Buffer | string>;
  if (type === "zset") {
    const flat = data as Buffer[];
    items = flat.map((b, i) => (i % 2 === 1 ? b.toString("latin1") : b));
  } else if (type === "hash") {
    // hgetallBuffer keys fields by string: fine for Sidekiq's ASCII fields, but
    // refuse rather than corrupt anything else.
    items = [];
    for (const [f, v] of Object.entries(data as Record<string, Buffer>)) {
      const fb = Buffer.from(f);
      if (fb.toString() !== f)
        throw new Error(`hash ${key} has a binary field name; this export format cannot keep it`);
      items.push(fb, v);
    }
  } else if (type === "string") items = data === null ? [] : [data as Buffer];
  else items = data as Buffer[];
  return { items, pttl };
}

/** Writes an export of this Redis to a stream; resolves when everything was handed to it. */
export async function exportToStream(redis: Redis, out: Writable, o: ExportOptions = {}): Promise<ExportSummary> {
  const started = Date.now();
  const packr = newPackr();
  let bytes = 0;
  const write = async (rec: ExportRecord) => {
    const b = packr.pack(rec);
    bytes += b.length;
    if (!out.write(b)) await once(out, "drain");
  };
  const patterns = exportPatterns(o);
  const info = await redis.info("server").catch(() => "");
  const redisVersion = /redis_version:([^\r\n]+)/.exec(info)?.[1];
  await write({
    kind: "header",
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    createdAt: new Date().toISOString(),
    source: redactUrl(o.source ?? "redis://"),
    ...(redisVersion ? { redisVersion } : {}),
    patterns,
  });
  const keys = await selectKeys(redis, patterns);
  const types = await keyTypes(redis, keys);
  const exported: ExportedKey[] = [];
  let entries = 0;
  let i = 0;
  for (const key of keys) {
    i++;
    const type = types.get(key);
    if (type === "none") continue;
    if (type !== "list" && type !== "zset" && type !== "set" && type !== "hash" && type !== "string") {
      throw new Error(`${key} is a ${String(type)}, which the export format does not hold`);
    }
    const data = await readKey(redis, key, type);
    if (!data) continue;
    const count = entryCount(type, data.items.length);
    await write({
      kind: "key",
      key: Buffer.from(key),
      type,
      count,
      pttl: data.pttl,
      digest: digestEntries(type, data.items),
    });
    for (const rec of itemRecords(type, data.items)) await write(rec);
    exported.push({ key, type, count });
    entries += count;
    o.progress?.({ phase: "export", key, done: i, total: keys.length });
  }
  await write({ kind: "end", keys: exported.length, entries });
  return { keys: exported, entries, bytes, durationMs: Date.now() - started };
}

/** Writes an export to a file (created or truncated); the file is complete when this resolves, removed if it fails. */
export async function exportToFile(redis: Redis, path: string, o: ExportOptions = {}): Promise<ExportSummary> {
  const out = createWriteStream(path);
  const opened = once(out, "open");
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => undefined); // observed through the races below
  await Promise.race([opened, failed]);
  try {
    const summary = await Promise.race([exportToStream(redis, out, o), failed]);
    out.end();
    await Promise.race([once(out, "finish"), failed]);
    return summary;
  } catch (e) {
    out.destroy();
    // A partial file has no end record (import would refuse it); do not leave it around.
    await rm(path, { force: true }).catch(() => undefined);
    throw e;
  }
}
