// Node's writer must produce the bytes Ruby's JSON.generate produces: Ruby
// parses what Node wrote and generates it again, and nothing may change.
import { expect, it } from "vitest";
import { RubyFloat, toRubyJson, versionAtLeast, type RubyJsonValue } from "../src/core/wire/index.js";
import { mulberry32 } from "../chaos/fuzz/prng.js";
import { describeEachSidekiq } from "./support/harness.js";

function randomFloats(): number[] {
  const rnd = mulberry32(2026);
  const xs: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const exp = Math.floor(rnd() * 80) - 40;
    xs.push((rnd() - 0.5) * 10 ** exp);
  }
  xs.push(0, -0, 1, 1e15, 1e16, 1e-4, 1e-5, 5e-324, Number.MAX_VALUE, 1795303599, 0.1 + 0.2, 4498948885593563.5);
  return xs;
}

const rest: RubyJsonValue = {
  ints: [0, -1, 9007199254740991, -9007199254740991, 18446744073709551617n, -(2n ** 70n)],
  strings: [
    "",
    "plain",
    "é\u2028\u2029",
    "😀 emoji",
    "/slash",
    "tab\tnl\ncr\r",
    "\u0000\u0001\u001f\u007f",
    '"quoted" \\back',
    "日本語",
  ],
  nested: { a: [], b: {}, c: [null, true, false, { "k y": [1, [2, [3]]] }] },
};

function bitsHex(x: number): string {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(x);
  return b.toString("hex");
}

describeEachSidekiq("JSON writer parity with Ruby's JSON.generate", (sk) => {
  it("Ruby re-generates Node's strings, integers and nesting byte for byte", async () => {
    const text = toRubyJson(rest);
    const back = await sk.ruby<string>(`JSON.generate(JSON.parse(${JSON.stringify(text)}))`);
    expect(back).toBe(text);
  });

  it("Ruby reads each of 2,000 Node-written floats as a Float with the very same bits", async () => {
    const xs = randomFloats();
    const text = toRubyJson(xs.map((x) => new RubyFloat(x)));
    const r = await sk.ruby<{ json: string; floats: boolean; bits: string[]; again: string }>(`
      a = JSON.parse(${JSON.stringify(text)})
      {"json" => JSON::VERSION, "floats" => a.all? { |f| f.is_a?(Float) },
       "bits" => a.map { |f| [f].pack("G").unpack1("H*") }, "again" => JSON.generate(a)}
    `);
    expect(r.floats).toBe(true);
    expect(r.bits).toEqual(xs.map(bitsHex));
    // json < 2.10 writes floats with Float#to_s, which is what we write; 2.10+ has
    // its own formatting (e.g. 0.0000000042 instead of 4.2e-09), equal in value.
    if (!versionAtLeast(r.json, "2.10.0")) expect(r.again).toBe(text);
  });
});
