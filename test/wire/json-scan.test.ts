import { describe, expect, it } from "vitest";
import { parseJson, splitObject, WireParseError } from "../../src/core/wire/index.js";

describe("parseJson", () => {
  it("keeps integers beyond 2^53 exact as bigint", () => {
    expect(parseJson("[18446744073709551617,-9007199254740993,9007199254740991,1.0]")).toEqual([
      18446744073709551617n,
      -9007199254740993n,
      9007199254740991,
      1,
    ]);
  });
  it("does not mistake a string for a big integer", () => {
    expect(parseJson('{"a":"18446744073709551617","b":18446744073709551617}')).toEqual({
      a: "18446744073709551617",
      b: 18446744073709551617n,
    });
  });
  it.each([
    ["{not json", /expected a string key at position 1/],
    ["[1,]", /unexpected/],
    ['{"a":1,}', /expected a string key/],
    ["[01]", /unexpected '1'/],
    ['"\\x"', /bad escape/],
    ["[1] 2", /trailing/],
    ['"a\nb"', /control character/],
    ["", /unexpected end/],
    ["[1", /unexpected end/],
    ["NaN", /unexpected 'N'/],
  ])("rejects %j with a position", (text, why) => {
    expect(() => parseJson(text)).toThrow(WireParseError);
    expect(() => parseJson(text)).toThrow(why);
  });
  it("scans 10,000 levels of nesting", () => {
    const text = "[".repeat(10_000) + "]".repeat(10_000);
    expect(() => parseJson(text)).not.toThrow();
  });
});

describe("splitObject", () => {
  it("returns each member's raw text in order, duplicates included", () => {
    expect(splitObject(' {"b" : 1.0 , "1":[2], "b":{"x":null}} ')).toEqual([
      { key: "b", raw: "1.0", plain: true },
      { key: "1", raw: "[2]", plain: true },
      { key: "b", raw: '{"x":null}', plain: true },
    ]);
  });
  it("marks members holding an integer beyond 2^53, and reads escaped keys", () => {
    expect(splitObject('{"a\\u0062":[12345678901234567890],"c":"d"}')).toEqual([
      { key: "ab", raw: "[12345678901234567890]", plain: false },
      { key: "c", raw: '"d"', plain: true },
    ]);
  });
  it("rejects a JSON value that is not an object", () => {
    expect(() => splitObject("[1]")).toThrow(/expected a JSON object/);
  });
});
