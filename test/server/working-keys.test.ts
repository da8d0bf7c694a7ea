// Reliable fetch's keys and lane default: recovery must recognise both the
// working hash (batches) and the working list (one-job fetches, and all that
// older versions left), and the default lanes keep reliable batches large:
// a reliable batch costs 4 commands whatever its size.
import { describe, expect, it } from "vitest";
import { defaultFetchLanes, laneBatch } from "../../src/core/server/fetch/fetch-lanes.js";
import { parseWipKey, wipKey, workingHashKey } from "../../src/core/wire/bridge-keys.js";

describe("working keys", () => {
  it("recovery parses the working list and the working hash of an identity whose hostname holds colons", () => {
    const identity = "host:with:colons:4242:0123456789ab";
    expect(parseWipKey(wipKey(identity, "queue:a|b"))).toEqual([identity, "queue:a|b"]);
    expect(parseWipKey(workingHashKey(identity, "queue:default"))).toEqual([identity, "queue:default"]);
    expect(parseWipKey("bridge:workers:x|queue:default")).toBeUndefined();
  });

  it("basic fetch keeps one lane; reliable fetch a second from concurrency 4 with fetch-ahead, from 16 without (its batches keep 8 jobs)", () => {
    expect([1, 3, 4, 10, 15, 16, 50].map((c) => defaultFetchLanes(c, true))).toEqual([1, 1, 1, 1, 1, 2, 2]);
    expect([1, 3, 4, 10, 50].map((c) => defaultFetchLanes(c, true, true))).toEqual([1, 1, 2, 2, 2]);
    expect([1, 3, 4, 10, 16, 50, 200].map((c) => defaultFetchLanes(c, false))).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it("a lane's batch: its share of the slots, or with fetch-ahead the whole concurrency", () => {
    expect(laneBatch(10, 2, false)).toBe(5);
    expect(laneBatch(7, 2, false)).toBe(4);
    expect(laneBatch(10, 2, true)).toBe(10);
    expect(laneBatch(50, 2, true)).toBe(50);
  });
});
