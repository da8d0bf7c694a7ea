import { describe, expect, it } from "vitest";
import { RawJson, RubyFloat, rubyFloatToS, toRubyJson, WireEncodeError } from "../../src/core/wire/index.js";

describe("rubyFloatToS", () => {
  // Each pair was printed by Ruby 3.1 and 3.3: JSON.generate([x]).
  const cases: Array<[number, string]> = [
    [1e14, "100000000000000.0"],
    [1e15, "1.0e+15"],
    [123456789012345.0, "123456789012345.0"],
    [1234567890123456.0, "1.234567890123456e+15"],
    [999999999999999.9, "999999999999999.9"],
    [0.001, "0.001"],
    [0.0001, "0.0001"],
    [0.00012345, "0.00012345"],
    [1e-5, "1.0e-05"],
    [5e-324, "5.0e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [1795303460.5995235, "1795303460.5995235"],
    [12.5, "12.5"],
    [100, "100.0"],
    [123e-20, "1.23e-18"],
    [1.5e21, "1.5e+21"],
    [-0.5, "-0.5"],
    [-0, "-0.0"],
    [1700000000, "1700000000.0"],
    [4498948885593563.5, "4498948885593563.5"],
    [-2088036739733070.2, "-2088036739733070.2"],
  ];
  it.each(cases)("%s is written as Ruby writes it (%s)", (x, want) => {
    expect(rubyFloatToS(x)).toBe(want);
  });
  it("refuses NaN and Infinity, as Ruby's generator does", () => {
    expect(() => rubyFloatToS(NaN)).toThrow(WireEncodeError);
    expect(() => rubyFloatToS(Infinity)).toThrow(/not allowed in JSON/);
  });
});

describe("toRubyJson", () => {
  it("writes compact JSON with raw UTF-8, unescaped / and U+2028", () => {
    expect(toRubyJson({ a: ["é\u2028/", null, true, 1, 1.5] })).toBe('{"a":["é\u2028/",null,true,1,1.5]}');
  });
  it("escapes control characters as Ruby does", () => {
    expect(toRubyJson('\u0000\b\t\n\f\r\u001b"\\')).toBe('"\\u0000\\b\\t\\n\\f\\r\\u001b\\"\\\\"');
  });
  it("keeps a decimal point on RubyFloat and writes bigint exactly", () => {
    expect(toRubyJson([new RubyFloat(1795303599), 18446744073709551617n])).toBe("[1795303599.0,18446744073709551617]");
  });
  it("splices RawJson verbatim", () => {
    expect(toRubyJson({ args: new RawJson("[1.0,2]") })).toBe('{"args":[1.0,2]}');
  });
  it("refuses values that are not JSON-native", () => {
    expect(() => toRubyJson([new Date(0)] as never)).toThrow(/Date is not a JSON-native value/);
    expect(() => toRubyJson([undefined] as never)).toThrow(/undefined at array index 0/);
    expect(() => toRubyJson(2 ** 60)).toThrow(/beyond 2\^53/);
    expect(() => toRubyJson("\ud800")).toThrow(/lone UTF-16 surrogate/);
  });
  it("handles 10,000 levels of nesting without overflowing the stack", () => {
    let v: unknown = 1;
    for (let i = 0; i < 10_000; i++) v = [v];
    expect(toRubyJson(v as never)).toBe("[".repeat(10_000) + "1" + "]".repeat(10_000));
  });
});
