// `migrate move`: moves the jobs of some classes (or all) from one queue to
// another, with their scheduled and retry entries, under live traffic.
//
// Each queued job moves in one Lua script that declares its three keys: LREM
// the exact old bytes from `queue:<from>` and, only if that removed one, LPUSH
// the rewritten payload (`queue` member changed through JobRecord, every other
// byte kept) onto `queue:<to>` and SADD `<to>` to `queues`. A job is therefore
// in exactly one of the two lists at every instant: a worker that BRPOPped it
// first makes the LREM find nothing (the job runs where it was, once), and a
// worker on the destination can only see it after the move. Candidates are
// moved oldest first, so the destination keeps their order.
// Scheduled, retry (and optionally dead) entries bound for `<from>` are
// rewritten in place: ZREM old + ZADD new with old's own score, only while old
// is still a member. Sets go first, the queue last, so a job the poller
// promotes to `<from>` during the pass is found in the queue. Passes repeat
// until one finds nothing left to move (or maxPasses): jobs still arriving on
// `<from>` (producers not yet re-routed) are reported as `remaining`.
import type { Redis } from "ioredis";
import { moveListElements, replaceSortedSetMembers } from "../../core/redis/scripts/index.js";
import { QUEUES_KEY, queueKey, RETRY_KEY, SCHEDULE_KEY } from "../../core/wire/keys.js";
import {
  chunks,
  fingerprint,
  identify,
  listPages,
  parseRecord,
  zsetPages,
  type JobSet,
  type ProgressFn,
} from "./stored-jobs.js";

/** Options of `moveJobs`: from and to queues, which classes, which sorted sets, dry run. */
export interface MoveOptions {
  from: string;
  to: string;
  /** Job classes to move (ActiveJob: the `wrapped` class). Undefined or empty: every job. */
  classes?: readonly string[];
  /** Sorted sets whose entries bound for `from` are rewritten too (default schedule and retry). */
  sets?: readonly JobSet[];
  dryRun?: boolean;
  /** Passes until nothing is left to move (default 3). */
  maxPasses?: number;
  pageSize?: number;
  /** Jobs per script call (default 100). */
  batchSize?: number;
  progress?: ProgressFn;
}

/** What a move did in one queue or set. */
export interface MoveLocationReport {
  key: string;
  scanned: number;
  /** Jobs matching the classes (dry run: that would move). */
  matched: number;
  /** Moved (queue) or rewritten in place (sets). */
  moved: number;
  /** Gone before their turn: run by a worker, promoted, deleted or changed meanwhile. */
  gone: number;
  /** Sets only: the rewritten member already existed; both left as they are. */
  conflicts: number;
  /** Matching jobs still there after the last pass. */
  remaining: number;
}

/** What `moveJobs` did, location by location. */
export interface MoveReport {
  from: string;
  to: string;
  classes: string[] | "all";
  dryRun: boolean;
  passes: number;
  locations: MoveLocationReport[];
  /** Moved or rewritten, by class. */
  byClass: Record<string, number>;
  moved: number;
  remaining: number;
  durationMs: number;
}

/** The payload with `queue` set to `to` (lossless), or undefined when it is not a job to move. */
export function rewriteForMove(
  raw: Buffer,
  o: { from: string; to: string; classes?: readonly string[] },
  requireQueue: boolean,
): { raw: string; className: string } | undefined {
  const parsed = parseRecord(raw);
  if (!parsed) return undefined;
  const id = identify(parsed.record);
  if (!id) return undefined;
  if (o.classes?.length && !o.classes.includes(id.className)) return undefined;
  if (requireQueue && id.queue !== o.from) return undefined;
  parsed.record.set("queue", o.to);
  return { raw: parsed.record.toString(), className: id.className };
}

function location(key: string): MoveLocationReport {
  return { key, scanned: 0, matched: 0, moved: 0, gone: 0, conflicts: 0, remaining: 0 };
}

/** Moves jobs between queues (or out of the retry and scheduled sets into a queue) under live traffic, never losing or duplicating one. */
export async function moveJobs(redis: Redis, o: MoveOptions): Promise<MoveReport> {
  if (!o.from || !o.to) throw new Error("move needs a source and a destination queue");
  if (o.from === o.to) throw new Error(`source and destination are the same queue ("${o.from}")`);
  const started = Date.now();
  const sets = o.sets ?? ([SCHEDULE_KEY, RETRY_KEY] as const);
  const pageSize = o.pageSize ?? 1000;
  const batchSize = o.batchSize ?? 100;
  const maxPasses = o.dryRun ? 1 : Math.max(1, o.maxPasses ?? 3);
  const src = queueKey(o.from);
  const dst = queueKey(o.to);
  const reports = new Map<string, MoveLocationReport>();
  for (const s of sets) reports.set(s, location(s));
  reports.set(src, location(src));
  const byClass: Record<string, number> = {};
  const count = (c: string) => (byClass[c] = (byClass[c] ?? 0) + 1);
  let passes = 0;
  let foundLast = 0;

  for (let pass = 1; pass <= maxPasses; pass++) {
    passes = pass;
    let total = await redis.llen(src);
    for (const s of sets) total += await redis.zcard(s);
    let done = 0;
    const phase = o.dryRun ? "counting" : `pass ${pass}`;
    const tick = (key: string, n: number) => {
      done += n;
      o.progress?.({ phase, key, done, total: Math.max(total, done) });
    };
    let found = 0;

    for (const s of sets) {
      const rep = reports.get(s)!;
      const seen = new Set<string>();
      for await (const page of zsetPages(redis, s, pageSize)) {
        const pairs: Array<[Buffer, string, string]> = [];
        for (const { member } of page) {
          rep.scanned++;
          const m = rewriteForMove(member, o, true);
          if (!m) continue;
          const fp = fingerprint(member);
          if (seen.has(fp)) continue;
          seen.add(fp);
          found++;
          if (o.dryRun) {
            rep.matched++;
            count(m.className);
          } else pairs.push([member, m.raw, m.className]);
        }
        for (const batch of chunks(pairs, batchSize)) {
          const res = await replaceSortedSetMembers(
            redis,
            [s],
            batch.flatMap(([a, b]) => [a, b]),
          );
          batch.forEach(([, , cls], i) => {
            rep.matched++;
            if (res[i] === 1) {
              rep.moved++;
              count(cls);
            } else if (res[i] === 2) rep.conflicts++;
            else rep.gone++;
          });
        }
        tick(s, page.length);
      }
    }

    // The queue: collect this pass's candidates, then move them oldest (tail) first.
    const rep = reports.get(src)!;
    const seen = new Set<string>();
    const candidates: Array<[Buffer, string, string]> = [];
    for await (const page of listPages(redis, src, pageSize)) {
      for (const item of page.items) {
        rep.scanned++;
        const m = rewriteForMove(item, o, false);
        if (!m) continue;
        const fp = fingerprint(item);
        if (seen.has(fp)) continue;
        seen.add(fp);
        candidates.push([item, m.raw, m.className]);
      }
      tick(src, page.items.length);
    }
    found += candidates.length;
    if (o.dryRun) {
      rep.matched += candidates.length;
      for (const [, , c] of candidates) count(c);
    } else {
      candidates.reverse();
      for (const batch of chunks(candidates, batchSize)) {
        const res = await moveListElements(redis, [src, dst, QUEUES_KEY], [o.to, ...batch.flatMap(([a, b]) => [a, b])]);
        batch.forEach(([, , cls], i) => {
          rep.matched++;
          if (res[i] === 1) {
            rep.moved++;
            count(cls);
          } else rep.gone++;
        });
      }
    }
    foundLast = found;
    if (found === 0 || o.dryRun) break;
  }

  // What still matches (only counted when the last pass found something: else it is 0).
  if (!o.dryRun && foundLast > 0) {
    for (const s of sets) reports.get(s)!.remaining = await countMatching(redis, s, "zset", o, pageSize);
    reports.get(src)!.remaining = await countMatching(redis, src, "list", o, pageSize);
  }
  const locations = [...reports.values()];
  return {
    from: o.from,
    to: o.to,
    classes: o.classes?.length ? [...o.classes] : "all",
    dryRun: !!o.dryRun,
    passes,
    locations,
    byClass,
    moved: locations.reduce((a, l) => a + (o.dryRun ? l.matched : l.moved), 0),
    remaining: locations.reduce((a, l) => a + l.remaining, 0),
    durationMs: Date.now() - started,
  };
}

/** Distinct entries of a key that still match the move. */
export async function countMatching(
  redis: Redis,
  key: string,
  type: "list" | "zset",
  o: { from: string; to: string; classes?: readonly string[] },
  pageSize = 1000,
): Promise<number> {
  const seen = new Set<string>();
  const check = (b: Buffer) => {
    if (!rewriteForMove(b, o, type === "zset")) return;
    seen.add(fingerprint(b));
  };
  if (type === "list") for await (const p of listPages(redis, key, pageSize)) p.items.forEach(check);
  else for await (const p of zsetPages(redis, key, pageSize)) for (const { member } of p) check(member);
  return seen.size;
}
