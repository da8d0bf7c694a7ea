// The first k of a stream by a total order, as Busy keeps a page of 20,000
// running jobs: the same rows as sorting everything and slicing, whatever the
// stream's order, its ties, or k against its length.
import { describe, expect, it } from "vitest";
import { Smallest } from "../../src/core/api/smallest.js";

interface Row {
  runAt: number;
  tid: string;
}

const order = (a: Row, b: Row) => a.runAt - b.runAt || (a.tid < b.tid ? -1 : a.tid > b.tid ? 1 : 0);

/** A seeded stream with many ties on runAt (so the tie-break decides), in a shuffled order. */
function stream(n: number, seed: number): Row[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: n }, (_, i) => ({ runAt: next() % 97, tid: `t${next() % 1000}-${i}` }));
}

describe("Smallest", () => {
  it("keeps what sorting the whole stream and taking its first k keeps, for k below, at and above the length", () => {
    for (const seed of [1, 7, 42]) {
      const rows = stream(500, seed);
      const whole = [...rows].sort(order);
      for (const k of [1, 2, 25, 499, 500, 501, 2000]) {
        const s = new Smallest<Row>(k, order);
        for (const r of rows) s.offer(r);
        expect(s.sorted()).toEqual(whole.slice(0, k));
      }
    }
  });

  it("keeps the same first k when the stream comes sorted, reversed, or all tied", () => {
    const rows = stream(300, 3).sort(order);
    for (const input of [rows, [...rows].reverse(), rows.map((r) => ({ ...r, runAt: 5 }))]) {
      const s = new Smallest<Row>(40, order);
      for (const r of input) s.offer(r);
      expect(s.sorted()).toEqual([...input].sort(order).slice(0, 40));
    }
  });

  it("names its last only once k are kept, and it is the k-th of the order so far", () => {
    const s = new Smallest<Row>(3, order);
    s.offer({ runAt: 5, tid: "a" });
    s.offer({ runAt: 1, tid: "b" });
    expect(s.last).toBeUndefined();
    s.offer({ runAt: 9, tid: "c" });
    expect(s.last).toEqual({ runAt: 9, tid: "c" });
    s.offer({ runAt: 2, tid: "d" });
    expect(s.last).toEqual({ runAt: 5, tid: "a" });
    s.offer({ runAt: 7, tid: "e" }); // after the last: turned away
    expect(s.sorted().map((r) => r.tid)).toEqual(["b", "d", "a"]);
  });

  it("keeps nothing for k = 0", () => {
    const s = new Smallest<Row>(0, order);
    s.offer({ runAt: 1, tid: "a" });
    expect(s.sorted()).toEqual([]);
    expect(s.last).toBeUndefined();
  });
});
