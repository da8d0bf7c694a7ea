import { describe, expect, it } from "vitest";
import { makeCapsule, parseQueue, queuesCommand } from "../../src/core/server/capsule.js";
import { serializeArgument } from "../../src/core/client/activejob.js";
import {
  activeJobArguments,
  AjSerialized,
  deserializeArgument,
  GlobalIdRef,
} from "../../src/core/server/activejob-args.js";
import { toRubyJson } from "../../src/core/wire/ruby-json.js";

describe("capsules and queue order (Sidekiq's Capsule#mode and BasicFetch#queues_cmd)", () => {
  it("parses queue[,weight]", () => {
    expect(parseQueue("critical,2")).toEqual(["critical", 2]);
    expect(parseQueue("default")).toEqual(["default", 0]);
    expect(() => parseQueue("x,-1")).toThrow(/whole number/);
  });
  it("is strict when every weight is 0: always the same order", () => {
    const c = makeCapsule({ name: "default", concurrency: 5, queues: ["a", "b", "c"] });
    expect(c.mode).toBe("strict");
    for (let i = 0; i < 20; i++) expect(queuesCommand(c)).toEqual(["queue:a", "queue:b", "queue:c"]);
  });
  it("is random when every weight is 1, weighted otherwise", () => {
    expect(makeCapsule({ name: "d", concurrency: 1, queues: ["a,1", "b,1"] }).mode).toBe("random");
    expect(makeCapsule({ name: "d", concurrency: 1, queues: ["a,3", "b,1"] }).mode).toBe("weighted");
  });
  it("puts a queue of weight 3 first about three times as often as one of weight 1", () => {
    const c = makeCapsule({ name: "d", concurrency: 1, queues: ["a,3", "b,1"] });
    expect(c.queues).toEqual(["a", "a", "a", "b"]);
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let aFirst = 0;
    for (let i = 0; i < 4000; i++) {
      const q = queuesCommand(c, rnd);
      expect(new Set(q).size).toBe(2);
      if (q[0] === "queue:a") aFirst++;
    }
    expect(aFirst / 4000).toBeGreaterThan(0.7);
    expect(aFirst / 4000).toBeLessThan(0.8);
  });
});

describe("ActiveJob argument decoding", () => {
  it("turns Rails' markers back into JS values", () => {
    expect(
      deserializeArgument([
        {
          str_key: 1,
          sym_key: { _aj_serialized: "ActiveJob::Serializers::SymbolSerializer", value: "v" },
          _aj_symbol_keys: ["sym_key"],
        },
        {
          ts: {
            _aj_serialized: "ActiveJob::Serializers::TimeSerializer",
            value: "2023-11-14T22:13:20.123456789+00:00",
          },
          _aj_ruby2_keywords: ["ts"],
        },
        { _aj_globalid: "gid://app/User/1" },
      ]),
    ).toEqual([{ str_key: 1, sym_key: "v" }, { ts: new Date(1_700_000_000_123) }, new GlobalIdRef("gid://app/User/1")]);
  });

  it("keeps a custom serializer's object byte for byte, floats included, and plain floats as numbers", () => {
    const money = '{"_aj_serialized":"MoneySerializer","amount":1.0,"currency":"EUR"}';
    const [custom, plain] = activeJobArguments(`[{"job_class":"X","arguments":[${money},2.0]}]`);
    expect(custom).toBeInstanceOf(AjSerialized);
    expect(toRubyJson(serializeArgument(custom))).toBe(money);
    expect(plain).toBe(2);
  });
});
