// The encoder's fast paths against the reference implementations: toRubyJson
// (recursive up to a depth, then iterative) against toRubyJsonIterative, and
// the pooled jid generator.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  RawJson,
  RubyFloat,
  toRubyJson,
  toRubyJsonIterative,
  WireEncodeError,
  type RubyJsonValue,
} from "../../src/core/wire/ruby-json.js";
import { JID_PATTERN, newJid } from "../../src/core/wire/jid.js";

/** The encoder's result or its error (class and message), to compare both encoders. */
function outcome(f: (v: RubyJsonValue) => string, v: unknown): { ok: string } | { err: string } {
  try {
    return { ok: f(v as RubyJsonValue) };
  } catch (e) {
    return { err: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

const jsonValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.bigInt(),
    fc.string({ unit: "binary" }),
    fc.string({ unit: "grapheme" }),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => new RubyFloat(x)),
    fc.constant(new RawJson("[1.0,2]")),
    fc.array(tie("v")),
    fc.dictionary(fc.string({ unit: "binary" }), tie("v")),
  ),
})).v;

/** Values both encoders must refuse, in various places. */
const badLeaf: fc.Arbitrary<unknown> = fc.constantFrom(
  undefined,
  NaN,
  Infinity,
  -Infinity,
  2 ** 60,
  "\ud800",
  "a\udc00b",
  new Date(0),
  new Map(),
  () => 1,
  Symbol("s"),
);

// Containers of at most 4: generating unbounded nested values took 2.5 s of the
// test's 2.6 s (5 s, its timeout, on a loaded machine); with the bounds 72% of
// the values still fail to encode (was 79%), 38% with two or more bad parts (53%).
const withBad: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    jsonValue,
    badLeaf,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constant("\udfff")), tie("v"), { maxKeys: 4 }),
    fc.tuple(fc.array(tie("v"), { maxLength: 4 }), badLeaf).map(([a, b]) => [...a, b]),
  ),
})).v;

describe("toRubyJson fast path", () => {
  it("writes exactly what the iterative encoder writes, for arbitrary values", () => {
    fc.assert(
      fc.property(jsonValue, (v) => {
        expect(outcome(toRubyJson, v)).toEqual(outcome(toRubyJsonIterative, v));
      }),
      { numRuns: 3000 },
    );
  });
  it("throws the iterative encoder's first error for values with bad parts", () => {
    fc.assert(
      fc.property(withBad, (v) => {
        expect(outcome(toRubyJson, v)).toEqual(outcome(toRubyJsonIterative, v));
      }),
      { numRuns: 3000 },
    );
  });
  it("names the same error where the two orders could differ", () => {
    // The iterative encoder checks a whole array for undefined (last index first)
    // and every key of an object before it descends.
    const cases: unknown[] = [
      [[undefined], undefined],
      [NaN, undefined, undefined],
      { a: NaN, ["\ud800"]: 1 },
      { a: [undefined], b: "\ud800" },
      [{ a: 2 ** 60 }, [undefined]],
      Object.create(null),
      Object.assign(Object.create(null), { x: [1, 2 ** 60] }),
    ];
    for (const v of cases) expect(outcome(toRubyJson, v)).toEqual(outcome(toRubyJsonIterative, v));
    expect(() => toRubyJson([NaN, undefined, undefined] as never)).toThrow(WireEncodeError);
  });
  it("writes -0 as 0, small and large integers, floats the Ruby way", () => {
    for (const v of [-0, 0, 1, -1, 2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 53 - 1, 0.5, 1e21, 1e-7, 2 ** 53, NaN]) {
      expect(outcome(toRubyJson, v)).toEqual(outcome(toRubyJsonIterative, v));
    }
    expect(toRubyJson(-0)).toBe("0");
  });
  it("escapes strings as before, and refuses lone surrogates anywhere", () => {
    for (const s of ["", "plain", "é\u2028/", '"\\', "\u0000\u001f", "😀", "\ud83d\ude00x", "\\ud800"]) {
      expect(toRubyJson(s)).toBe(toRubyJsonIterative(s));
      expect(toRubyJson({ [s]: s })).toBe(toRubyJsonIterative({ [s]: s }));
    }
    expect(() => toRubyJson({ ["\ud800"]: 1 })).toThrow(/lone UTF-16 surrogate/);
    expect(() => toRubyJson(["ok", "x\ud800"])).toThrow(/lone UTF-16 surrogate/);
  });
  it.each([150, 199, 200, 201, 202, 450, 10_000])(
    "handles %i levels (arrays, objects, mixed) like the iterative encoder",
    (depth) => {
      let a: unknown = 1;
      let o: unknown = "x";
      let m: unknown = [new RubyFloat(1), { k: null }];
      for (let i = 0; i < depth; i++) {
        a = [a];
        o = { k: o, n: i };
        m = i % 2 ? [m, i] : { ["k" + (i % 3)]: m };
      }
      for (const v of [a, o, m]) expect(toRubyJson(v as RubyJsonValue)).toBe(toRubyJsonIterative(v as RubyJsonValue));
      expect(toRubyJson(a as RubyJsonValue)).toBe("[".repeat(depth) + "1" + "]".repeat(depth));
    },
  );
  it("reports an error deep below the fast path's depth as the iterative encoder does", () => {
    let v: unknown = [1, undefined];
    for (let i = 0; i < 5_000; i++) v = { a: [v] };
    expect(outcome(toRubyJson, v)).toEqual(outcome(toRubyJsonIterative, v));
    expect(() => toRubyJson(v as RubyJsonValue)).toThrow(/undefined at array index 1/);
  });
});

describe("newJid (pooled CSPRNG bytes)", () => {
  it("gives 24 lowercase hex digits, distinct over many pool refills", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 256 * 12 + 7; i++) {
      const j = newJid();
      expect(j).toMatch(JID_PATTERN);
      seen.add(j);
    }
    expect(seen.size).toBe(256 * 12 + 7);
  });
  it("looks uniformly random (each hex digit about 1/16 of the time)", () => {
    const counts = new Map<string, number>();
    const n = 4000;
    for (let i = 0; i < n; i++) for (const c of newJid()) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(16);
    const expected = (n * 24) / 16;
    for (const c of counts.values()) expect(Math.abs(c - expected) / expected).toBeLessThan(0.1);
  });
});
