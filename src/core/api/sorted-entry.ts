// A job in one of Sidekiq's sorted sets (Ruby's `Sidekiq::SortedEntry`): the
// member's exact bytes with its score as Redis printed it, plus the names the
// API gives the sets, the actions on an entry and what a bulk action did, and
// the one change `SortedEntry#retry` makes to a payload.
import type { JobRecord } from "../wire/job-record.js";
import { isFloatLexeme } from "../wire/json-scan.js";
import { RubyFloat } from "../wire/ruby-json.js";
import { viewOf, type JobView } from "./job-entry.js";

// SCHEDULE_KEY, RETRY_KEY and DEAD_KEY of wire/keys.ts, spelled out so the
// API reference shows them.
/** The Redis key of a sorted job set: `schedule`, `retry` or `dead`. */
export type JobSetName = "schedule" | "retry" | "dead";

/** What can be done to one entry of a job set (the Web UI's buttons). */
export type EntryAction = "retry" | "add-to-queue" | "kill" | "delete";

/** A job in a sorted set, with its score (when it is due, or when it died). */
export interface SortedEntry extends JobView {
  /** The sorted set's key. */
  set: string;
  /** The score exactly as Redis returned it (reused verbatim for BYSCORE and re-adds). */
  score: string;
  /** The score as epoch seconds: run-at time (schedule, retry) or time of death (dead). */
  at: number;
}

/** What a bulk action did: how many jobs it changed, and which it could not. */
export interface BulkResult {
  /** Jobs acted on. */
  done: number;
  /** Members that could not be acted on (not a JSON object, a `retry_count` Ruby cannot decrement). */
  failed: Array<{ raw: string; error: string }>;
}

/** One page of a filtered listing (`SortedJobSet#filteredPage`), and where the next one starts. */
export interface FilteredPage {
  entries: SortedEntry[];
  /** Where the next request should go on reading (a ZREVRANGE index), when the set goes on. */
  next: number | undefined;
  /** Members looked at by this request. */
  scanned: number;
}

/** One member of `set` with its score. */
export function entryOf(set: string, raw: string, score: string): SortedEntry {
  return { ...viewOf(raw), set, score, at: Number(score) };
}

/** A `WITHSCORES` reply (`[member, score, member, score, …]`) as entries. */
export function entriesOf(set: string, flat: string[]): SortedEntry[] {
  const out: SortedEntry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push(entryOf(set, flat[i]!, flat[i + 1]!));
  return out;
}

/** A job-set action that cannot be done, as Ruby's API raises (e.g. decrementing a `retry_count` that is not a number). */
export class JobSetError extends Error {
  override name = "JobSetError";
}

/**
 * `msg["retry_count"] -= 1 if msg["retry_count"]`: an Integer stays an
 * Integer (0 becomes -1, as in Ruby), a Float a Float; absent, null or false
 * is left alone. Anything else makes Ruby raise NoMethodError; so do we.
 */
export function decrementRetryCount(rec: JobRecord): void {
  const raw = rec.raw("retry_count");
  if (raw === undefined || raw === "null" || raw === "false") return;
  if (/^-?\d/.test(raw)) {
    if (isFloatLexeme(raw)) rec.set("retry_count", new RubyFloat(Number(raw) - 1));
    else {
      const n = BigInt(raw) - 1n;
      rec.set(
        "retry_count",
        n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n,
      );
    }
    return;
  }
  throw new JobSetError(`retry_count is ${raw}, which Ruby cannot decrement (undefined method '-')`);
}
