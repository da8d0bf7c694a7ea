// `migrate timestamps --to 7|8`: rewrites the payload times of queued,
// scheduled, retry and dead jobs between float seconds (Sidekiq 6, 7) and
// integer milliseconds (8), under live traffic. This is what makes rolling
// Sidekiq 8 back to 7 possible: 7 reads an integer `created_at` as seconds
// (year 58000), so its API, latency and Web UI go wrong until the payloads
// are rewritten.
//
// Safety under live traffic. Each payload is replaced by one Lua script that
// looks the old bytes up in Redis and swaps them for the new ones in the same
// atomic step:
//   - lists: LSET at the element's current index (found at the index it was
//     read at plus the drift pushes caused, else near it, else by LPOS). The
//     element is never absent: a worker's BRPOP gets either the old or the new
//     string, once. Nothing is inserted or removed, so the list's order and
//     length are untouched and concurrent LPUSH/RPUSH/BRPOP need no care. (An
//     LREM + LINSERT pair, or LINSERT by a pivot value, would open a window in
//     which the job is gone, or land it next to the wrong twin, and a script
//     that LREMs then re-pushes would change its position.)
//   - sorted sets: ZREM old + ZADD new with old's own score, only if old is
//     still a member (the poller may have promoted it; then it is in a queue,
//     which is read later) and new is not (merging would lose a duplicate).
// What a concurrent writer adds during a pass (a Ruby 8 or Node client still
// writing the old unit) is not in the pass's snapshot: it is left as written,
// counted by the verification scan at the end of the pass as `remaining`, and
// converted by the next pass. Payloads already in the target unit are never
// rewritten (so 8 -> 7 -> 8 gives back the original bytes).
import type { Redis } from "ioredis";
import { replaceListElements, replaceSortedSetMembers } from "../../core/redis/scripts/index.js";
import { isFloatLexeme } from "../../core/wire/json-scan.js";
import { JobRecord } from "../../core/wire/job-record.js";
import { DEAD_KEY, RETRY_KEY, SCHEDULE_KEY } from "../../core/wire/keys.js";
import { strictUtf8 } from "../../core/wire/sidekiq-constants.js";
import { profileFor } from "../../core/wire/dialect.js";
import { migratePayloadTimes } from "../../core/wire/time-unit-rewrite.js";
import { MILLIS_THRESHOLD } from "../../core/wire/timestamps.js";
import {
  chunks,
  fingerprint,
  JOB_SETS,
  listPages,
  queueLists,
  zsetPages,
  type JobSet,
  type ProgressFn,
} from "./stored-jobs.js";

/** The dialect whose unit to write: 6 and 7 float seconds, 8 integer milliseconds. */
export type TimestampTarget = 6 | 7 | 8;

export type ConversionStatus =
  /** Some time field was in the other unit; `raw` is the rewritten payload. */
  | "convert"
  /** Every time field is already in the target unit (or there is none). */
  | "target"
  /** Not a JSON object (or not UTF-8): left alone. */
  | "unparseable";

export interface Conversion {
  status: ConversionStatus;
  raw?: string;
  /** The fields rewritten. */
  fields: string[];
}

const TIME_MEMBER = /"(?:created_at|enqueued_at|failed_at|retried_at|discarded_at)"\s*:\s*(-?\d[\d.eE+-]*)/g;

/**
 * A sound quick "no": false only when no time field anywhere in the text
 * (top level or nested) holds a number in the other unit, so the payload
 * needs no parsing. Escaped key names (`\u0063reated_at`) defeat the pattern:
 * such text always takes the full parse.
 */
/** The rule of wire/time-unit-rewrite.ts on one lexeme: would it be rewritten for `to`? */
function inOtherUnit(lex: string, to: TimestampTarget): boolean {
  const integerSeconds = !isFloatLexeme(lex) && Math.abs(Number(lex)) < MILLIS_THRESHOLD;
  return profileFor(to).payloadTime === "millis"
    ? isFloatLexeme(lex) || integerSeconds
    : !isFloatLexeme(lex) && !integerSeconds;
}

function mayNeedConversion(raw: string, to: TimestampTarget): boolean {
  if (raw.includes("\\u")) return true;
  TIME_MEMBER.lastIndex = 0;
  for (let m = TIME_MEMBER.exec(raw); m; m = TIME_MEMBER.exec(raw)) {
    const lex = m[1]!;
    if (inOtherUnit(lex, to)) return true;
  }
  return false;
}

/**
 * The payload with its time fields in `to`'s unit, by the one rule of
 * wire/time-unit-rewrite.ts (an integer below 1e11 is a foreign writer's
 * seconds and stays), with a quick "no" that skips parsing most payloads.
 */
export function convertPayloadTimes(raw: string, to: TimestampTarget): Conversion {
  if (!mayNeedConversion(raw, to)) {
    // Text that is not even an object is still called unparseable; a malformed
    // object with no time in the other unit passes as "target". Both are left alone.
    return raw.trimStart().startsWith("{") ? { status: "target", fields: [] } : { status: "unparseable", fields: [] };
  }
  let record: JobRecord;
  try {
    record = JobRecord.parse(raw);
  } catch {
    return { status: "unparseable", fields: [] };
  }
  const { changed } = migratePayloadTimes(record, to);
  return changed.length === 0
    ? { status: "target", fields: changed }
    : { status: "convert", raw: record.toString(), fields: changed };
}

/**
 * Counts one stored element in the report (scanned, and unparseable or
 * already in the target unit) and returns its rewrite when it needs one.
 */
function tally(stored: Buffer, to: TimestampTarget, rep: TimestampKeyReport): string | undefined {
  rep.scanned++;
  const text = strictUtf8(stored);
  const conv = text === undefined ? undefined : convertPayloadTimes(text, to);
  if (conv === undefined || conv.status === "unparseable") rep.unparseable++;
  else if (conv.status === "target") rep.alreadyTarget++;
  else return conv.raw;
  return undefined;
}

/** True when the payload has a time field in the other unit than `to`'s. */
export function needsConversion(raw: string, to: TimestampTarget): boolean {
  return convertPayloadTimes(raw, to).status === "convert";
}

/** What the timestamp migration did to one key (a queue or job set). */
export interface TimestampKeyReport {
  key: string;
  type: "list" | "zset";
  /** Elements read (a re-read element counts again). */
  scanned: number;
  /** Would be (dry run) or were rewritten. */
  converted: number;
  alreadyTarget: number;
  /** Gone before their turn: taken by a worker, promoted, deleted, or changed by someone else. */
  gone: number;
  /** Sorted sets only: the rewritten payload was already a member; both kept as they are. */
  conflicts: number;
  unparseable: number;
  /** After the last pass, entries still in the other unit (written meanwhile): run again. */
  remaining: number;
}

/** What `migrateTimestamps` did, key by key. */
export interface TimestampReport {
  to: TimestampTarget;
  unit: "seconds" | "milliseconds";
  dryRun: boolean;
  passes: number;
  keys: TimestampKeyReport[];
  totals: Omit<TimestampKeyReport, "key" | "type">;
  durationMs: number;
}

/** Options of `migrateTimestamps`: the target dialect, keys, dry run, progress. */
export interface TimestampOptions {
  to: TimestampTarget;
  dryRun?: boolean;
  /** Limit to these queues (default: all `queue:*` lists and the `queues` set). */
  queues?: string[];
  /** Sorted sets to include (default schedule, retry, dead). */
  sets?: readonly JobSet[];
  /** Stop after this many passes even if entries remain (default 1). */
  maxPasses?: number;
  /** Elements per read (default 1000). */
  pageSize?: number;
  /** Replacements per script call (default 200): bounds how long Redis is held. */
  batchSize?: number;
  /** How far from the expected index a list element is looked for before LPOS (default 512). */
  window?: number;
  progress?: ProgressFn;
}

function emptyReport(key: string, type: "list" | "zset"): TimestampKeyReport {
  return { key, type, scanned: 0, converted: 0, alreadyTarget: 0, gone: 0, conflicts: 0, unparseable: 0, remaining: 0 };
}

/** Which keys, in the order a pass visits them: the sets jobs leave for queues first, the dead last. */
async function targetKeys(redis: Redis, o: TimestampOptions): Promise<Array<{ key: string; type: "list" | "zset" }>> {
  const sets = o.sets ?? JOB_SETS;
  const out: Array<{ key: string; type: "list" | "zset" }> = [];
  for (const s of [SCHEDULE_KEY, RETRY_KEY] as const) if (sets.includes(s)) out.push({ key: s, type: "zset" });
  for (const k of await queueLists(redis, o.queues)) out.push({ key: k, type: "list" });
  if (sets.includes(DEAD_KEY)) out.push({ key: DEAD_KEY, type: "zset" });
  return out;
}

async function sizeOf(redis: Redis, k: { key: string; type: "list" | "zset" }): Promise<number> {
  return k.type === "list" ? redis.llen(k.key) : redis.zcard(k.key);
}

/** Migrates (or, with dryRun, counts) every payload time in queues and job sets. */
export async function migrateTimestamps(redis: Redis, o: TimestampOptions): Promise<TimestampReport> {
  if (![6, 7, 8].includes(o.to)) throw new RangeError(`--to must be 6, 7 or 8, got ${String(o.to)}`);
  const started = Date.now();
  const pageSize = o.pageSize ?? 1000;
  const batchSize = o.batchSize ?? 200;
  const window = o.window ?? 512;
  const maxPasses = o.dryRun ? 1 : Math.max(1, o.maxPasses ?? 1);
  const reports = new Map<string, TimestampKeyReport>();
  let passes = 0;

  for (let pass = 1; pass <= maxPasses; pass++) {
    passes = pass;
    const keys = await targetKeys(redis, o);
    let total = 0;
    for (const k of keys) total += await sizeOf(redis, k);
    let done = 0;
    const phase = o.dryRun ? "counting" : `pass ${pass}`;
    const tick = (key: string, n: number) => {
      done += n;
      o.progress?.({ phase, key, done, total: Math.max(total, done) });
    };
    for (const k of keys) {
      let rep = reports.get(k.key);
      if (!rep) reports.set(k.key, (rep = emptyReport(k.key, k.type)));
      if (k.type === "list") await listPass(redis, k.key, o, rep, { pageSize, batchSize, window, tick });
      else await zsetPass(redis, k.key, o, rep, { pageSize, batchSize, tick });
    }
    if (o.dryRun) break;
    // Verification: what is still in the other unit (written during the pass).
    let remaining = 0;
    for (const k of keys) {
      const rep = reports.get(k.key)!;
      rep.remaining = await countRemaining(redis, k, o.to, pageSize);
      remaining += rep.remaining;
    }
    if (remaining === 0) break;
  }

  const list = [...reports.values()];
  const totals = emptyReport("", "list");
  for (const r of list) {
    totals.scanned += r.scanned;
    totals.converted += r.converted;
    totals.alreadyTarget += r.alreadyTarget;
    totals.gone += r.gone;
    totals.conflicts += r.conflicts;
    totals.unparseable += r.unparseable;
    totals.remaining += r.remaining;
  }
  const { key: _k, type: _t, ...t } = totals;
  return {
    to: o.to,
    unit: profileFor(o.to).payloadTime === "millis" ? "milliseconds" : "seconds",
    dryRun: !!o.dryRun,
    passes,
    keys: list,
    totals: t,
    durationMs: Date.now() - started,
  };
}

interface PassContext {
  pageSize: number;
  batchSize: number;
  window?: number;
  tick: (key: string, n: number) => void;
}

async function listPass(
  redis: Redis,
  key: string,
  o: TimestampOptions,
  rep: TimestampKeyReport,
  c: PassContext,
): Promise<void> {
  let drift = 0;
  let inflight: Promise<void> = Promise.resolve();
  const seen = new Set<string>();
  for await (const page of listPages(redis, key, c.pageSize)) {
    const triples: Array<[number, Buffer, string]> = [];
    page.items.forEach((buf, i) => {
      const next = tally(buf, o.to, rep);
      if (next !== undefined) {
        // An element seen again because pushes shifted the list: it was handled (or is queued) already.
        const fp = fingerprint(buf);
        if (seen.has(fp)) return;
        seen.add(fp);
        if (o.dryRun) rep.converted++;
        else triples.push([page.start + i, buf, next]);
      }
    });
    // The next page is read and converted while this page's scripts run; each
    // script waits for the previous one, whose answer carries the drift.
    const n = page.items.length;
    const prev = inflight;
    inflight = (async () => {
      await prev;
      for (const batch of chunks(triples, c.batchSize)) {
        const res = await replaceListElements(redis, [key], [drift, c.window ?? 512, ...batch.flat()]);
        drift = Number(res[res.length - 1]);
        for (let i = 0; i < batch.length; i++) {
          if (res[i] === 1) rep.converted++;
          else rep.gone++;
        }
      }
      c.tick(key, n);
    })();
    // A failure surfaces at the next await of `inflight`; never as an unhandled rejection meanwhile.
    inflight.catch(() => undefined);
  }
  await inflight;
}

async function zsetPass(
  redis: Redis,
  key: string,
  o: TimestampOptions,
  rep: TimestampKeyReport,
  c: PassContext,
): Promise<void> {
  const seen = new Set<string>();
  // Members this pass wrote: ZSCAN may return them later in the same scan; they are not news.
  const written = new Set<string>();
  let inflight: Promise<void> = Promise.resolve();
  for await (const page of zsetPages(redis, key, c.pageSize)) {
    const pairs: Array<[Buffer, string]> = [];
    for (const { member } of page) {
      if (written.size > 0 && written.has(fingerprint(member))) continue;
      const next = tally(member, o.to, rep);
      if (next !== undefined) {
        const fp = fingerprint(member);
        if (seen.has(fp)) continue; // ZSCAN may return a member twice
        seen.add(fp);
        if (o.dryRun) rep.converted++;
        else pairs.push([member, next]);
      }
    }
    const n = page.length;
    const prev = inflight;
    inflight = (async () => {
      await prev;
      for (const batch of chunks(pairs, c.batchSize)) {
        const res = await replaceSortedSetMembers(redis, [key], batch.flat());
        for (let i = 0; i < batch.length; i++) {
          if (res[i] === 1) {
            rep.converted++;
            written.add(fingerprint(batch[i]![1]));
          } else if (res[i] === 2) rep.conflicts++;
          else rep.gone++;
        }
      }
      c.tick(key, n);
    })();
    // A failure surfaces at the next await of `inflight`; never as an unhandled rejection meanwhile.
    inflight.catch(() => undefined);
  }
  await inflight;
}

/**
 * How many distinct entries of a key are in the other unit now (a list re-read
 * under concurrent pushes, or a member ZSCAN returns twice, counts once).
 */
export async function countRemaining(
  redis: Redis,
  k: { key: string; type: "list" | "zset" },
  to: TimestampTarget,
  pageSize = 1000,
): Promise<number> {
  let n = 0;
  const seen = new Set<string>();
  const check = (b: Buffer) => {
    const text = strictUtf8(b);
    if (text === undefined || !needsConversion(text, to)) return;
    const fp = fingerprint(b);
    if (seen.has(fp)) return;
    seen.add(fp);
    n++;
  };
  if (k.type === "list") {
    for await (const page of listPages(redis, k.key, pageSize)) page.items.forEach(check);
  } else {
    for await (const page of zsetPages(redis, k.key, pageSize)) for (const { member } of page) check(member);
  }
  return n;
}
