import { describe, expect, it } from "vitest";
import { normalizeItem, type JobHash } from "../../src/core/client/normalize.js";
import { SidekiqArgumentError } from "../../src/core/client/errors.js";
import { scheduleAt } from "../../src/core/client/job.js";
import { verifyArgs, findUnsafeArg } from "../../src/core/client/strict-args.js";
import type { ClientMiddleware } from "../../src/core/client/middleware.js";
import { MiddlewareChain } from "../../src/core/middleware/chain.js";
import { serializeArguments, aj, iso8601Nanos } from "../../src/core/client/activejob.js";
import { profileForVersion, RubyFloat, toRubyJson } from "../../src/core/wire/index.js";

const v8 = profileForVersion("8.1.7");
const v7 = profileForVersion("7.3.2");

describe("normalizeItem (Sidekiq's JobUtil)", () => {
  it("puts defaults first, then the caller's keys, then jid and created_at", () => {
    const j = normalizeItem(
      { class: "HardJob", args: [1], queue: "low", tags: ["a"] },
      v8,
      undefined,
      1_795_000_000_123,
    );
    expect(Object.keys(j)).toEqual(["retry", "queue", "class", "args", "tags", "jid", "created_at"]);
    expect(j.queue).toBe("low");
    expect(j.created_at).toBe(1_795_000_000_123);
    expect(j.jid).toMatch(/^[0-9a-f]{24}$/);
  });
  it("writes created_at as a float-second Ruby Float before Sidekiq 8", () => {
    const j = normalizeItem({ class: "X", args: [] }, v7, undefined, 1_795_000_000_000);
    expect(toRubyJson(j.created_at!)).toBe("1795000000.0");
  });
  it("keeps a caller's jid and created_at (||=)", () => {
    const j = normalizeItem({ class: "X", args: [], jid: "abc", created_at: 5 }, v8);
    expect([j.jid, j.created_at]).toEqual(["abc", 5]);
  });
  it("truncates retry_for to an integer", () => {
    expect(normalizeItem({ class: "X", args: [], retry_for: 3600.7 }, v8).retry_for).toBe(3600);
  });
  it.each([
    [{ args: [] }, /Job must be a Hash with 'class' and 'args' keys/],
    [{ class: "X", args: "no" }, /Job args must be an Array/],
    [{ class: 5, args: [] }, /Job class must be either a Class or String/],
    [{ class: "X", args: [], at: "soon" }, /Job 'at' must be a Numeric timestamp/],
    [{ class: "X", args: [], tags: "t" }, /Job tags must be an Array/],
    [{ class: "X", args: [], retry_for: 2_000_000_000 }, /retry_for must be a relative amount of time/],
    [{ class: "X", args: [], queue: "" }, /Job must include a valid queue name/],
  ])("raises Sidekiq's ArgumentError for %j", (item, msg) => {
    expect(() => normalizeItem(item as never, v8)).toThrow(SidekiqArgumentError);
    expect(() => normalizeItem(item as never, v8)).toThrow(msg);
  });
});

describe("strict arguments", () => {
  const cases: Array<[string, unknown[], string]> = [
    ["undefined", [undefined], "undefined"],
    ["a function", [() => 1], "a function"],
    ["a Date", [new Date(0)], "a Date"],
    ["a Map", [new Map()], "a Map"],
    ["a Set", [new Set()], "a Set"],
    ["NaN in a hash", [{ a: NaN }], "NaN"],
    ["Infinity", [Infinity], "Infinity"],
    ["2^60 as a number", [2 ** 60], "beyond 2^53"],
    ["a Symbol", [Symbol("s")], "a Symbol"],
    ["a class instance", [new (class Foo {})()], "a Foo"],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    ["a sparse array", [[1, , 3]], "a hole in a sparse array"],
  ];
  it.each(cases)("refuses %s", (_name, args, what) => {
    expect(findUnsafeArg(args)?.what).toContain(what);
    expect(() => verifyArgs("HardJob", args, "raise")).toThrow(/Job arguments to HardJob must be native JSON types/);
  });
  it("names where the bad value sits", () => {
    expect(findUnsafeArg([1, { user: { at: new Date(0) } }])).toEqual({ path: "args[1].user.at", what: "a Date" });
  });
  it("verifies arguments nested deeper than its quick walk, by the path-naming one", () => {
    const nest = (depth: number, leaf: unknown): unknown[] => {
      let v: unknown = leaf;
      for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
      return [v];
    };
    const safe = nest(5000, 1);
    expect(verifyArgs("X", safe, "raise")).toBe(safe);
    expect(() => verifyArgs("X", nest(5000, new Date(0)), "raise")).toThrow(/\.k is a Date/);
    expect(() => verifyArgs("X", nest(3, new Date(0)), "raise")).toThrow(/args\[0\]\.k\[0\]\.k is a Date/);
  });
  it("allows JSON-native values, bigint and RubyFloat", () => {
    const args = [1, -1.5, "s", null, true, [], {}, 18446744073709551617n, new RubyFloat(1)];
    expect(verifyArgs("X", args, "raise")).toBe(args);
  });
  it("warn mode warns and stores what JSON.stringify would", () => {
    const warnings: string[] = [];
    expect(verifyArgs("X", [new Date(0), NaN, { u: undefined, k: 1 }], "warn", (m) => warnings.push(m))).toEqual([
      "1970-01-01T00:00:00.000Z",
      null,
      { k: 1 },
    ]);
    expect(warnings).toHaveLength(1);
  });
  it("off mode converts silently", () => {
    expect(
      verifyArgs("X", [undefined], "off", () => {
        throw new Error("no warning expected");
      }),
    ).toEqual([null]);
  });
});

describe("scheduleAt (Sidekiq's at(interval))", () => {
  it("treats values below 1e9 as seconds from now, others as epoch seconds", () => {
    expect(scheduleAt(5, 1_795_000_000)).toBe(1_795_000_005);
    expect(scheduleAt(1_795_000_100, 1_795_000_000)).toBe(1_795_000_100);
    expect(scheduleAt(new Date(1_795_000_100_000), 1_795_000_000)).toBe(1_795_000_100);
  });
  it("returns undefined (push now) for a time not in the future", () => {
    expect(scheduleAt(0, 1_795_000_000)).toBeUndefined();
    expect(scheduleAt(-5, 1_795_000_000)).toBeUndefined();
    expect(scheduleAt(1_700_000_000, 1_795_000_000)).toBeUndefined();
  });
});

describe("client middleware", () => {
  const ctx = () => ({ className: "X", job: { class: "X" } as JobHash, queue: "q", redis: undefined as never });
  const chain = (...mw: ClientMiddleware[]) => {
    const c = new MiddlewareChain<ClientMiddleware>("client");
    for (const m of mw) c.add(m);
    return c;
  };
  it("runs links in order and pushes only when every link calls next", async () => {
    const order: string[] = [];
    const c = ctx();
    expect(
      await chain(
        async (x, n) => {
          order.push("a");
          x.job.a = 1;
          await n();
        },
        (_x, n) => {
          order.push("b");
          return n();
        },
      ).invoke(c),
    ).toBe(true);
    expect(order).toEqual(["a", "b"]);
    expect(c.job.a).toBe(1);
    expect(await chain(async () => {}).invoke(ctx())).toBe(false);
  });
});

describe("ActiveJob arguments", () => {
  it("serializes as Rails does", () => {
    const t = new Date(Date.UTC(2023, 10, 14, 22, 13, 20, 123));
    expect(
      serializeArguments([
        1,
        "s",
        aj.symbolKeys({ sym_key: aj.symbol("sym_val") }),
        { str_key: 1 },
        aj.kwargs({ ts: t, big: 1.5 }),
        aj.globalId("gid://app/User/1"),
      ]),
    ).toEqual([
      1,
      "s",
      {
        sym_key: { _aj_serialized: "ActiveJob::Serializers::SymbolSerializer", value: "sym_val" },
        _aj_symbol_keys: ["sym_key"],
      },
      { str_key: 1, _aj_symbol_keys: [] },
      {
        ts: { _aj_serialized: "ActiveJob::Serializers::TimeSerializer", value: "2023-11-14T22:13:20.123000000Z" },
        big: 1.5,
        _aj_ruby2_keywords: ["ts", "big"],
      },
      { _aj_globalid: "gid://app/User/1" },
    ]);
    expect(iso8601Nanos(t)).toBe("2023-11-14T22:13:20.123000000Z");
  });
  it("refuses reserved keys and unsupported values", () => {
    expect(() => serializeArguments([{ _aj_globalid: "x" }])).toThrow(/reserved key/);
    expect(() => serializeArguments([new Map()])).toThrow(/Unsupported argument type: Map/);
  });
});
