import { describe, expect, it } from "vitest";
import {
  strategyNameOf,
  backlogInfoKey,
  concurrencyKey,
  thresholdKey,
} from "../../src/addons/sidekiq-throttled/keys.js";
import { resolveThrottled, ThrottledOptionError } from "../../src/addons/sidekiq-throttled/options.js";
import { gemLineFor } from "../../src/addons/sidekiq-throttled/scripts.js";

describe("throttled options, read as sidekiq_throttle reads its own", () => {
  it("defaults: cooldown 1 s after 100 throttled in a row, requeue :enqueue, lost_job_threshold 900 / avg 300", () => {
    const r = resolveThrottled({ classes: { PartnerApiJob: { concurrency: { limit: 2 } } } });
    expect([r.cooldownPeriod, r.cooldownThreshold, r.gem]).toEqual([1, 100, undefined]);
    const s = r.byClass.get("PartnerApiJob")!;
    expect(s.name).toBe("PartnerApiJob");
    expect(s.requeue.with).toBe("enqueue");
    expect(s.concurrency[0]).toMatchObject({ lostJobThreshold: 900, avgJobDuration: 300, maxDelay: 1800 });
    expect(resolveThrottled(true).byClass.size).toBe(0);
  });

  it("derives the durations as interp_duration_args does, ttl being lost_job_threshold's old name", () => {
    const c = (o: object) =>
      resolveThrottled({ classes: { J: { concurrency: { limit: 1, ...o } } } }).byClass.get("J")!.concurrency[0];
    expect(c({ lostJobThreshold: 30 })).toMatchObject({ lostJobThreshold: 30, avgJobDuration: 10, maxDelay: 100 });
    expect(c({ ttl: 30 })).toMatchObject({ lostJobThreshold: 30, avgJobDuration: 10 });
    expect(c({ avgJobDuration: 20 })).toMatchObject({ lostJobThreshold: 60, avgJobDuration: 20, maxDelay: 200 });
    expect(c({ avgJobDuration: 20, lostJobThreshold: 50, maxDelay: 7 })).toMatchObject({
      lostJobThreshold: 50,
      maxDelay: 7,
    });
    expect(() => c({ avgJobDuration: 20, lostJobThreshold: 20 })).toThrow(
      "lost_job_threshold must be greater than avg_job_duration",
    );
  });

  it("refuses what the gem refuses: no strategy, a bad :with, an unknown shared throttle, bad numbers", () => {
    const bad = (o: object) => () => resolveThrottled(o);
    expect(bad({ classes: { J: {} } })).toThrow("Neither :concurrency nor :threshold given");
    expect(bad({ classes: { J: { threshold: { limit: 1, period: 1 }, requeue: { with: "later" } } } })).toThrow(
      "requeue: later is not a valid value for :with",
    );
    expect(bad({ classes: { J: "google_api" } })).toThrow("Strategy not found: google_api");
    expect(bad({ classes: { J: { threshold: { limit: 1, period: 0 } } } })).toThrow(ThrottledOptionError);
    expect(bad({ classes: { J: { concurrency: { limit: "2" } } } })).toThrow("limit must be a number or a function");
    expect(bad({ cooldownPeriod: 0 })).toThrow("cooldownPeriod");
    expect(bad({ cooldownThreshold: 1.5 })).toThrow("cooldownThreshold");
    expect(bad({ gem: 3 })).toThrow("gem must be 1 or 2");
  });

  it("a shared throttle (sidekiq_throttle_as) is one strategy under its own name for every class naming it", () => {
    const r = resolveThrottled({
      shared: { google_api: { concurrency: { limit: 10 }, threshold: { limit: 123, period: 3600 } } },
      classes: { FetchProfileJob: "google_api", FetchCommentsJob: "google_api" },
      defaultRequeue: { with: "schedule" },
    });
    expect(r.byClass.get("FetchProfileJob")).toBe(r.byClass.get("FetchCommentsJob"));
    expect(r.byClass.get("FetchProfileJob")!.name).toBe("google_api");
    expect(r.byClass.get("FetchProfileJob")!.requeue.with).toBe("schedule");
  });

  it("keys: the gem's spelling, with the suffix, and the name read back from any of them", () => {
    expect(concurrencyKey("A::B")).toBe("throttled:A::B:concurrency.v2");
    expect(backlogInfoKey("A", "u1")).toBe("throttled:A:concurrency.v2:u1.backlog_info");
    expect(thresholdKey("A", "u1")).toBe("throttled:A:threshold:u1");
    for (const k of [concurrencyKey("A::B"), backlogInfoKey("A::B", "x"), thresholdKey("A::B", "x:y")])
      expect(strategyNameOf(k)).toBe("A::B");
    expect(strategyNameOf("throttled:A:other")).toBeUndefined();
    expect(strategyNameOf("queue:throttled")).toBeUndefined();
  });

  it("the gem line: 2.x on a Sidekiq 8 fleet (2.x requires it), 1.x before", () => {
    expect([gemLineFor(6), gemLineFor(7), gemLineFor(8)]).toEqual([1, 1, 2]);
  });
});
