// Naming one sorted-set entry in a URL or a form, as Sidekiq's Web UI does:
// "<score>-<jid>" (the score exactly as Redis returned it), and finding the
// entries again from such keys or from a text filter.
import type { Redis } from "ioredis";
import { globEscape, viewOf } from "../api/job-entry.js";
import type { SortedEntry, SortedJobSet } from "../api/sorted-set.js";

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
    const [next, flat] = await redis.zscan(set.name, cursor, "MATCH", `*${globEscape(substr)}*`, "COUNT", 1000);
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
