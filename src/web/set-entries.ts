// Naming one sorted-set entry in a URL or a form, as Sidekiq's Web UI does:
// "<score>-<jid>" (the score exactly as Redis returned it), and finding the
// entries again from such keys or from a text filter.
import type { Redis } from "ioredis";
import { globEscape, viewOf } from "../api/job-entry.js";
import type { SortedEntry, SortedJobSet } from "../api/sorted-set.js";

/** Members ZSCAN looks at per call: large, so a filter over 100,000 entries is a few round trips. */
const SCAN_COUNT = 10_000;

export function entryKey(e: Pick<SortedEntry, "score" | "jid">): string {
  return `${e.score}-${e.jid ?? ""}`;
}

/** "<score>-<jid>" back to its parts; undefined when it is not one. */
export function parseEntryKey(key: string): { score: string; jid: string } | undefined {
  const m = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)-(.*)$/i.exec(key);
  if (!m) return undefined;
  return { score: m[1]!, jid: m[2]! };
}

/** The entries a key names (normally one; every member at that score when the job has no jid). */
export async function entriesForKey(set: SortedJobSet, key: string): Promise<SortedEntry[]> {
  const k = parseEntryKey(key);
  if (!k) return [];
  const all = await set.fetch(k.score);
  return all.filter((e) => (e.jid ?? "") === k.jid);
}

export interface FilteredPage {
  entries: SortedEntry[];
  /** Where the next request should go on reading (a ZREVRANGE index), when the set goes on. */
  next: number | undefined;
  /** Members looked at by this request. */
  scanned: number;
}

/** At most this many members are looked at per filtered page, so a page stays fast on any set. */
export const FILTER_SCAN_BUDGET = 20_000;
const FILTER_CHUNK = 2_000;

/**
 * Up to `limit` entries, newest first, from index `from` on, that `match`
 * accepts; stops after `budget` members and says where to go on.
 */
export async function filteredPage(
  redis: Redis,
  set: SortedJobSet,
  match: (e: SortedEntry) => boolean,
  quick: (raw: string) => boolean,
  from: number,
  limit: number,
  budget = FILTER_SCAN_BUDGET,
): Promise<FilteredPage> {
  const entries: SortedEntry[] = [];
  let at = from;
  while (entries.length < limit && at - from < budget) {
    const flat = await redis.zrevrange(set.name, at, at + FILTER_CHUNK - 1, "WITHSCORES");
    const members = flat.length / 2;
    for (let i = 0; i < members; i++) {
      const raw = flat[i * 2]!;
      if (!quick(raw)) continue;
      const score = flat[i * 2 + 1]!;
      const e: SortedEntry = { ...viewOf(raw), set: set.name, score, at: Number(score) };
      if (!match(e)) continue;
      entries.push(e);
      if (entries.length === limit) {
        at += i + 1;
        return { entries, next: at, scanned: at - from };
      }
    }
    at += members;
    if (members < FILTER_CHUNK) return { entries, next: undefined, scanned: at - from };
  }
  return { entries, next: at, scanned: at - from };
}

/**
 * The entries whose stored text contains `substr` (ZSCAN MATCH *substr*, as
 * Ruby's `JobSet#scan`), newest first, at most `max` of them.
 */
export async function matchingEntries(
  redis: Redis,
  set: SortedJobSet,
  substr: string,
  max: number,
): Promise<{ entries: SortedEntry[]; capped: boolean }> {
  const seen = new Map<string, SortedEntry>();
  let cursor = "0";
  let capped = false;
  do {
    const [next, flat] = await redis.zscan(set.name, cursor, "MATCH", `*${globEscape(substr)}*`, "COUNT", SCAN_COUNT);
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const raw = flat[i]!;
      if (seen.has(raw)) continue;
      if (seen.size >= max) {
        capped = true;
        break;
      }
      const score = flat[i + 1]!;
      seen.set(raw, { ...viewOf(raw), set: set.name, score, at: Number(score) });
    }
    cursor = next;
  } while (cursor !== "0" && !capped);
  return { entries: [...seen.values()].sort((a, b) => b.at - a.at), capped };
}
