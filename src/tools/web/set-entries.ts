// Naming one sorted-set entry in a URL or a form, as Sidekiq's Web UI does:
// "<score>-<jid>" (the score exactly as Redis returned it), and finding the
// entries again from such a key.
import type { SortedEntry } from "../../core/api/sorted-entry.js";
import type { SortedJobSet } from "../../core/api/sorted-set.js";

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
