// The lock digest Node computes equals the one sidekiq-unique-jobs computes in
// Ruby (SidekiqUniqueJobs::Job.prepare on the payload Ruby parsed), for 200
// generated argument lists: unicode, big integers, floats, nested hashes.
import { expect, it } from "vitest";
import { lockDigest, type DigestAlgorithm } from "../src/addons/sidekiq-unique-jobs/digest.js";
import { fpconvFloat } from "../src/addons/sidekiq-unique-jobs/fpconv.js";
import { RubyFloat, rubyFloatToS, toRubyJson, type RubyJsonValue } from "../src/core/wire/ruby-json.js";
import { describeEachSidekiq } from "./support/harness.js";

/** Deterministic generator (mulberry32), so a failure names a reproducible case. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  "",
  "plain",
  "héllo wörld",
  "日本語のテキスト",
  "emoji 🎉👩‍👩‍👧‍👦",
  "RTL עברית مرحبا",
  "combining e\u0301",
  'quote " backslash \\ slash /',
  "controls \u0000\u0001\u001f\t\n\r\b\f",
  "line sep \u2028 para \u2029",
  "del \u007f nbsp \u00a0",
  "<script>&amp;</script>",
];
const FLOATS = [
  0.5,
  1.5,
  -2.25,
  0.1 + 0.2,
  1e-7,
  1.0e-5,
  123456789.125,
  5e-324,
  1.7976931348623157e308,
  3.14158,
  -1e-300,
  2.5e15,
  4498948885593563.5,
  1e21 + 0.5,
];
const RUBY_FLOATS = [1e20, 100, 0, -0, 1e15, 1e16, 123456, -7];
const BIGINTS = [2n ** 64n, -(2n ** 63n), 12345678901234567890123456789n, 9007199254740993n, 2n ** 53n];

function gen(r: () => number, depth: number): RubyJsonValue {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const k = Math.floor(r() * (depth > 2 ? 8 : 11));
  switch (k) {
    case 0:
      return pick(STRINGS) + (r() < 0.3 ? String(Math.floor(r() * 1000)) : "");
    case 1:
      return Math.floor((r() - 0.5) * 2 ** 40);
    case 2: {
      // An integral float is a Ruby Float only when Node says so.
      const x = pick(FLOATS) * (r() < 0.5 ? 1 : -1);
      return Number.isInteger(x) ? new RubyFloat(x) : x;
    }
    case 3:
      return new RubyFloat(pick(RUBY_FLOATS));
    case 4:
      return pick(BIGINTS);
    case 5:
      return r() < 0.5;
    case 6:
      return null;
    case 7:
      return Number.MAX_SAFE_INTEGER - Math.floor(r() * 10);
    case 8: {
      const n = Math.floor(r() * 4);
      return Array.from({ length: n }, () => gen(r, depth + 1));
    }
    default: {
      const n = Math.floor(r() * 4);
      const o: { [k: string]: RubyJsonValue } = {};
      for (let i = 0; i < n; i++) {
        const key = r() < 0.2 ? String(Math.floor(r() * 100)) : `${pick(STRINGS)}${i}`;
        o[key] = gen(r, depth + 1);
      }
      return o;
    }
  }
}

interface Case {
  class: string;
  queue: string;
  args: RubyJsonValue[];
  algorithm: DigestAlgorithm;
  prefix?: string;
}

function cases(): Case[] {
  const r = rng(20260323);
  const out: Case[] = [];
  for (let i = 0; i < 200; i++) {
    const n = Math.floor(r() * 5);
    out.push({
      class: i % 7 === 0 ? "Billing::ÜberJob" : `UniqueDigestJob${i % 3}`,
      queue: i % 5 === 0 ? "crítico" : "default",
      args: Array.from({ length: n }, () => gen(r, 0)),
      algorithm: i % 4 === 3 ? "modern" : "legacy",
      ...(i % 9 === 0 ? { prefix: "myapp" } : {}),
    });
  }
  return out;
}

describeEachSidekiq(
  "unique jobs: lock digest parity with the gem",
  (sk) => {
    for (const gem of ["sidekiq-unique-jobs-8.1.0", "sidekiq-unique-jobs-9.0.0.alpha2"]) {
      if (gem.includes("9.0") && sk.target.version !== "8.1.7") continue;
      it(`200 argument lists digest as ${gem} does`, async () => {
        const all = cases();
        // Ruby gets each payload as the JSON text Node would write, parses it
        // as Sidekiq does and lets the gem fill in lock_args and lock_digest.
        const payloads = all.map((c) =>
          toRubyJson({
            class: c.class,
            queue: c.queue,
            args: c.args,
            ...(c.prefix ? { lock_prefix: c.prefix } : {}),
            alg: c.algorithm,
          }),
        );
        const code = `
          require "sidekiq-unique-jobs"
          texts = JSON.parse(<<~'BRIDGE_JSON_END')
          ${JSON.stringify(payloads)}
          BRIDGE_JSON_END
          texts.map do |t|
            item = JSON.parse(t)
            SidekiqUniqueJobs.config.digest_algorithm = item.delete("alg").to_sym
            SidekiqUniqueJobs::Job.prepare(item)
            item["lock_digest"]
          end
        `;
        const ruby = await sk.ruby<string[]>(code, sk.peers(gem));
        // The fleet's json gem decides how floats are spelled in the digested text.
        const jsonFloats = (await sk.ruby<boolean>("Gem::Version.new(JSON::VERSION) >= Gem::Version.new('2.10')"))
          ? "fpconv"
          : "to_s";
        expect(ruby).toHaveLength(200);
        const mismatches: string[] = [];
        all.forEach((c, i) => {
          const node = lockDigest({
            class: c.class,
            queue: c.queue,
            lockArgs: c.args,
            algorithm: c.algorithm,
            jsonFloats,
            ...(c.prefix ? { lockPrefix: c.prefix } : {}),
          });
          if (node !== ruby[i]) mismatches.push(`#${i} ${payloads[i]}: node ${node} ruby ${ruby[i]}`);
        });
        expect(mismatches).toEqual([]);
        // The cases really cover what they claim.
        const text = payloads.join("\n");
        expect(text).toMatch(/[^\x00-\x7f]/);
        expect(text).toMatch(/\d{20}/);
        expect(text).toMatch(/e\+20/);
        expect(text).toMatch(/\{[^}]*\{/);
        expect(new Set(ruby).size).toBeGreaterThan(150);
      }, 60_000);
    }
    it("2000 random doubles are spelled as the fleet's json gem spells them", async () => {
      const r = rng(7);
      const view = new DataView(new ArrayBuffer(8));
      const xs: number[] = [];
      while (xs.length < 2000) {
        view.setUint32(0, Math.floor(r() * 2 ** 32));
        view.setUint32(4, Math.floor(r() * 2 ** 32));
        const x = view.getFloat64(0);
        // Half over all doubles, half over everyday magnitudes.
        const y = xs.length % 2 ? x : (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20);
        if (Number.isFinite(y)) xs.push(y);
      }
      // Doubles travel as their bits, so Ruby formats exactly the same value.
      const hex = xs.map((x) => {
        view.setFloat64(0, x);
        return view.getBigUint64(0).toString(16).padStart(16, "0");
      });
      const [version, texts] = await sk.ruby<[string, string[]]>(
        `[JSON::VERSION, ${JSON.stringify(hex)}.map { |h| JSON.generate([[h].pack("H*").unpack1("G")]) }]`,
      );
      const [major = 0, minor = 0] = version.split(".").map(Number);
      const format = major > 2 || (major === 2 && minor >= 10) ? fpconvFloat : rubyFloatToS;
      const bad = xs.map((x, i) => [x, `[${format(x)}]`, texts[i]]).filter(([, a, b]) => a !== b);
      expect(bad).toEqual([]);
    }, 60_000);
  },
  (t) => t.version === "7.3.2" || t.version === "8.1.7",
);
