// The gem's digest text and float spellings, on values whose Ruby answers are
// known (the interop test checks 200 generated lists against the real gem).
import { describe, expect, it } from "vitest";
import { lockDigest } from "../../src/addons/sidekiq-unique-jobs/digest.js";
import { fpconvFloat } from "../../src/addons/sidekiq-unique-jobs/fpconv.js";
import { RubyFloat } from "../../src/core/wire/ruby-json.js";
import { createHash } from "node:crypto";

const md5 = (s: string) => createHash("md5").update(s).digest("hex");

describe("lockDigest", () => {
  it("is the prefix and the MD5 of JSON.generate of the sorted [key, value] pairs", () => {
    const d = lockDigest({ class: "MyJob", queue: "default", lockArgs: [1, "a", new RubyFloat(2)] });
    expect(d).toBe(`uniquejobs:${md5('[["class","MyJob"],["lock_args",[1,"a",2.0]],["queue","default"]]')}`);
  });

  it("leaves out the queue or the class when unique across them, and sorts apartment first", () => {
    const d = lockDigest({
      class: "C",
      queue: "q",
      lockArgs: [],
      apartment: "t1",
      uniqueAcrossQueues: true,
      lockPrefix: "p",
    });
    expect(d).toBe(`p:${md5('[["apartment","t1"],["class","C"],["lock_args",[]]]')}`);
  });

  it("SHA3-256 for the modern algorithm; floats the fpconv way when asked", () => {
    const modern = lockDigest({ class: "C", queue: "q", lockArgs: [], algorithm: "modern" });
    expect(modern).toMatch(/^uniquejobs:[0-9a-f]{64}$/);
    const fp = lockDigest({ class: "C", queue: "q", lockArgs: [1e-5, new RubyFloat(1e20)], jsonFloats: "fpconv" });
    expect(fp).toBe(`uniquejobs:${md5('[["class","C"],["lock_args",[0.00001,1e+20]],["queue","q"]]')}`);
  });
});

describe("fpconvFloat (json 2.10+)", () => {
  it("spells floats as Ruby's json 3.1 does", () => {
    // Values and spellings read from JSON.generate on Debian forky's json 3.1.0.
    const cases: Array<[number, string]> = [
      [1e20, "1e+20"],
      [1e-300, "1e-300"],
      [1e15, "1e+15"],
      [1e14, "100000000000000.0"],
      [1e-5, "0.00001"],
      [1e-7, "0.0000001"],
      [123456, "123456.0"],
      [5e-324, "5e-324"],
      [4498948885593563.5, "4498948885593563.5"],
      [0.0001, "0.0001"],
      [-0, "-0.0"],
      [-30674835690297.188, "-30674835690297.187"],
      [327240929240360800, "3.2724092924036083e+17"],
    ];
    for (const [x, s] of cases) expect(fpconvFloat(x)).toBe(s);
  });
});
