// Unit tests of the poller's promoting-set naming (recovery parses what the poller writes).
import { describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { identityHost } from "../../src/core/server/recovery.js";
import {
  parsePromotingKey,
  parseWipKey,
  promotingKey,
  PROMOTING_REGISTRY,
  WORKING_REGISTRY,
} from "../../src/core/wire/bridge-keys.js";
import { DEFAULT_BATCH_SIZE, ScheduledPoller } from "../../src/core/server/scheduled.js";
import type { Client } from "../../src/core/client/client.js";
import { profileForVersion } from "../../src/core/wire/index.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

describe("promoting sets", () => {
  it("names one set per process and sorted set, which recovery parses back (hostnames may hold colons)", () => {
    for (const id of ["web-1:123:0123456789ab", "fe80::1:77:abcdefabcdef", "host|x:9:000000000000"]) {
      for (const set of ["retry", "schedule"]) {
        const key = promotingKey(id, set);
        expect(key).toBe(`bridge:promoting:${id}|${set}`);
        expect(parsePromotingKey(key)).toEqual([id, set]);
      }
    }
    expect(identityHost("fe80::1:77:abcdefabcdef")).toBe("fe80::1");
    expect(parsePromotingKey("bridge:promoting:h:1:a|dead")).toBeUndefined();
    expect(parsePromotingKey("bridge:wip:h:1:a|queue:x")).toBeUndefined();
    expect(parseWipKey(promotingKey("h:1:a", "retry"))).toBeUndefined();
    expect(PROMOTING_REGISTRY).not.toBe(WORKING_REGISTRY);
  });

  it("the poller's keys use its identity; batchSize must be a positive integer", () => {
    const redis = new Redis({ lazyConnect: true });
    try {
      const opts = {
        redis,
        client: {} as Client,
        profile: () => profileForVersion("8.1.7"),
        retry: () => ({ profile: profileForVersion("8.1.7") }),
        logger: quiet,
      };
      expect(new ScheduledPoller({ ...opts, identity: "h:1:abcabcabcabc" }).promotingKey("schedule")).toBe(
        "bridge:promoting:h:1:abcabcabcabc|schedule",
      );
      expect(new ScheduledPoller(opts).promotingKey("retry")).toMatch(
        new RegExp(`^bridge:promoting:.+:${process.pid}:[0-9a-f]{12}\\|retry$`),
      );
      expect(DEFAULT_BATCH_SIZE).toBe(100);
      for (const bad of [0, -1, 1.5, Number.NaN])
        expect(() => new ScheduledPoller({ ...opts, batchSize: bad })).toThrow(RangeError);
    } finally {
      redis.disconnect();
    }
  });
});
