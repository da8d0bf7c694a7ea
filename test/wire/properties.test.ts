// Property-based tests of the codec (fast-check): for arbitrary payloads,
// parse then serialize is the identity, big integers and float lexemes included.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { JobRecord, parseJson, RubyFloat, toRubyJson, type RubyJsonValue } from "../../src/core/wire/index.js";

// JSON values as Ruby writes them: integers of any size, floats always with a
// point or exponent, any string (no lone surrogates: they are not UTF-8).
const rubyValue: fc.Arbitrary<RubyJsonValue> = fc.letrec<{ v: RubyJsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => new RubyFloat(d)),
    fc.string({ unit: "grapheme" }),
    fc.array(tie("v"), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: "grapheme" }), tie("v"), { maxKeys: 5 }),
  ),
})).v;

describe("codec properties", () => {
  it("parse then serialize of a payload is the identity, byte for byte", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: "grapheme" }), rubyValue, { maxKeys: 8 }), (obj) => {
        const text = toRubyJson({ class: "X", args: [], ...obj });
        expect(JobRecord.parse(text).toString()).toBe(text);
        // A rewrite of one member keeps every other member's bytes.
        const rec = JobRecord.parse(text).set("retry_count", 0);
        for (const k of JobRecord.parse(text).keys())
          if (k !== "retry_count") expect(rec.raw(k)).toBe(JobRecord.parse(text).raw(k));
      }),
      { numRuns: 300 },
    );
  });

  it("values survive a write and a read: big integers exactly, floats bit for bit", () => {
    fc.assert(
      fc.property(rubyValue, (v) => {
        expect(parseJson(toRubyJson(v))).toEqual(plain(v));
      }),
      { numRuns: 500 },
    );
  });
});

/** What a reader gets back: RubyFloat as a number, integers within 2^53 as numbers. */
function plain(v: RubyJsonValue): unknown {
  if (v instanceof RubyFloat) return v.value;
  if (typeof v === "bigint")
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    // defineProperty: a "__proto__" key must stay an own property, as JSON.parse makes it.
    for (const [k, x] of Object.entries(v))
      Object.defineProperty(o, k, {
        value: plain(x as RubyJsonValue),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return o;
  }
  return v;
}
