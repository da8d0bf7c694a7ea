// sidekiq-cron's encodings and fugit's rules, without Redis (the interop
// tests check them against the real gem).
import { describe, expect, it } from "vitest";
import {
  CronJob,
  CronSchedule,
  formatHistoryTime,
  formatLastEnqueueTime,
  parseLastEnqueueTime,
  truthyFlag,
} from "../../src/addons/sidekiq-cron/index.js";

describe("sidekiq-cron job encodings", () => {
  it("writes and reads last_enqueue_time as '%Y-%m-%d %H:%M:%S %z'", () => {
    const t = new Date("2026-11-23T05:15:17.900Z");
    expect(formatLastEnqueueTime(t)).toBe("2026-11-23 05:15:17 +0000");
    expect(formatHistoryTime(t)).toBe("2026-11-23 05:15:17 UTC");
    expect(parseLastEnqueueTime("2026-11-23 06:15:17 +0100")?.toISOString()).toBe("2026-11-23T05:15:17.000Z");
    expect(parseLastEnqueueTime("2026-11-23T05:15:17Z")?.toISOString()).toBe("2026-11-23T05:15:17.000Z");
    expect(parseLastEnqueueTime("never")).toBeUndefined();
  });

  it("reads flags as Ruby's /^(true|t|yes|y|1)$/i", () => {
    for (const v of [true, "true", "T", "yes", "y", "1", 1]) expect(truthyFlag(v)).toBe(true);
    for (const v of [false, "0", "", "no", "false", undefined, null, "yess"]) expect(truthyFlag(v)).toBe(false);
  });

  it("builds the message Ruby builds for a class it cannot load, and keeps a stored one", () => {
    const j = CronJob.build({ name: "a", cron: "* * * * *", class: "K", args: { x: 1 }, queue: "q", retry: 2 });
    expect(j.toHash().message).toBe('{"queue":"q","class":"K","args":[{"x":1}],"retry":2}');
    expect(j.toHash().args).toBe('[{"x":1}]');
    const stored = CronJob.fromHash({ name: "b", cron: "* * * * *", klass: "K", message: '{"class":"K","queue":"z"}' });
    expect(stored.queue).toBe("z");
    expect(stored.toHash().message).toBe('{"class":"K","queue":"z"}');
  });

  it("names every reason a job is invalid", () => {
    const j = CronJob.fromHash({ namespace: "*", cron: "61 * * * *", message: "{}" });
    expect(j.errors()).toEqual([
      "'name' must be set",
      "'namespace' cannot be '*'",
      expect.stringMatching(/^'cron' -> "61 \* \* \* \*" -> /),
      "'klass' (or class) must be set",
    ]);
  });
});

describe("fugit's schedule rules", () => {
  const at = (s: string) => new Date(s);
  it("previous_time is the last fire time at least a second before", () => {
    const c = new CronSchedule("* * * * *");
    expect(c.previousTime(at("2026-01-01T12:00:00.500Z"))?.toISOString()).toBe("2026-01-01T11:59:00.000Z");
    expect(c.previousTime(at("2026-01-01T12:00:01Z"))?.toISOString()).toBe("2026-01-01T12:00:00.000Z");
  });
  it("skips a time a DST change skips and fires twice on a repeated one", () => {
    const gap = new CronSchedule("30 2 * * * Europe/Berlin");
    expect(gap.nextTime(at("2026-03-29T00:00:00Z"))?.toISOString()).toBe("2026-03-30T00:30:00.000Z");
    const overlap = new CronSchedule("30 1 * * * America/Los_Angeles");
    const first = overlap.nextTime(at("2026-11-01T05:30:00Z"))!;
    expect(first.toISOString()).toBe("2026-11-01T08:30:00.000Z");
    expect(overlap.nextTime(first)?.toISOString()).toBe("2026-11-01T09:30:00.000Z");
  });
  it("reads fugit's extensions", () => {
    expect(new CronSchedule("0 22-2 * * *").fields.hours).toEqual([0, 1, 2, 22, 23]);
    expect(new CronSchedule("0 0 -2 * *").nextTime(at("2026-02-01T00:00:00Z"))?.toISOString()).toBe(
      "2026-02-27T00:00:00.000Z",
    );
    expect(new CronSchedule("0 0 * * fri#-1").nextTime(at("2026-11-01T00:00:00Z"))?.toISOString()).toBe(
      "2026-11-27T00:00:00.000Z",
    );
    expect(() => new CronSchedule("0 0 30 2 *")).toThrow(/Feb 30th/);
    expect(() => new CronSchedule("every day at noon")).toThrow(/natural language/);
  });
});
