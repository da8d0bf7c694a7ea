// Shrinking a failing case: smaller candidates (a member dropped, an argument
// dropped, a value simplified), tried in batches so one Ruby process judges
// many; the smallest that still fails the same way wins, until none does.
import type { RubyJsonValue } from "../../src/core/wire/ruby-json.js";
import type { Fields, FuzzCase } from "./generator.js";
import type { Mismatch } from "./report.js";

/** Members every job needs to be pushed, performed and found: never dropped nor simplified. */
const KEEP = new Set(["class", "queue", "jid"]);

function simpler(v: RubyJsonValue): RubyJsonValue[] {
  if (Array.isArray(v)) return [[], ...v.map((_, i) => v.filter((__, j) => j !== i)), ...v.filter(Array.isArray)];
  if (typeof v === "string") {
    const chars = [...v];
    return chars.length > 1 ? ["", chars.slice(0, Math.ceil(chars.length / 2)).join("")] : v ? [""] : [];
  }
  if (v && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const entries = Object.entries(v);
    return [{}, ...entries.map(([k]) => Object.fromEntries(entries.filter(([x]) => x !== k)) as RubyJsonValue)];
  }
  return [];
}

function size(fields: Fields): number {
  return JSON.stringify(fields, (_k, x: unknown) => (typeof x === "bigint" ? String(x) : x)).length;
}

/** Cases one step smaller than `c`, smallest first. */
export function candidates(c: FuzzCase): FuzzCase[] {
  const out: Fields[] = [];
  c.fields.forEach(([k, v], i) => {
    if (KEEP.has(k)) return;
    if (k !== "args") out.push(c.fields.filter((_, j) => j !== i));
    for (const s of simpler(v)) out.push(c.fields.map((f, j) => (j === i ? [k, s] : f)));
  });
  return out.map((fields) => ({ ...c, fields })).sort((a, b) => size(a.fields) - size(b.fields));
}

/** What kind of failure a mismatch is: its first problem up to the first colon. */
const kind = (m: Mismatch) => m.problems[0]!.split(":")[0];

/**
 * The smallest case that still fails as `m` does, after at most `rounds`
 * rounds; `check` runs a batch and returns its mismatches by case index.
 */
export async function shrink(
  m: Mismatch,
  check: (batch: FuzzCase[]) => Promise<Map<number, Mismatch>>,
  rounds = 30,
): Promise<Mismatch> {
  let best = m;
  for (let r = 0; r < rounds; r++) {
    // Each candidate its own jid: the checks find a case's job by it.
    const batch = candidates(best.case).map((x, i) => ({
      ...x,
      index: i,
      fields: x.fields.map(([k, v]): [string, RubyJsonValue] =>
        k === "jid" && typeof v === "string" ? [k, i.toString(16).padStart(8, "0") + v.slice(8)] : [k, v],
      ),
    }));
    if (batch.length === 0) break;
    const failing = await check(batch);
    const next = batch.map((x) => failing.get(x.index)).find((f) => f !== undefined && kind(f) === kind(m));
    if (!next) break;
    best = { ...next, case: { ...next.case, index: m.case.index } };
  }
  return best;
}
