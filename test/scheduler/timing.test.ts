// sidekiq-scheduler's kinds and the strings rufus-scheduler reads: fugit's
// durations, et-orbi's points in time and `to_s`, and each kind's next
// trigger after loading and after a trigger.
import { describe, expect, it } from "vitest";
import {
  overlapAllowed,
  formatEoTime,
  parseDuration,
  parsePointInTime,
  ScheduleSyntaxError,
  splitScheduleValue,
  timingFor,
} from "../../src/addons/sidekiq-scheduler/timing.js";

const T0 = Date.UTC(2026, 10, 26, 14, 41, 30, 250); // 2026-11-26 14:41:30.250 UTC

describe("fugit durations", () => {
  it.each([
    ["2s", 2],
    ["1m10s", 70],
    ["1h", 3600],
    ["1w2d", 777_600],
    ["1d", 86_400],
    ["1M", 30 * 86_400],
    ["1y", 365 * 86_400],
    ["30", 30],
    ["0.5", 0.5],
    ["1.5h", 5400],
    ["2 hours", 7200],
    ["10 minutes", 600],
    ["1h 30m", 5400],
    ["-1h", -3600],
    ["PT5M", 300],
    ["P1D", 86_400],
    ["P1DT2H", 93_600],
  ])("%s is %d s", (s, secs) => {
    expect(parseDuration(s)).toBe(secs);
  });
  it.each(["soon", "5x", "1m soon", "P", "PT"])("%j is not a duration", (s) => {
    expect(parseDuration(s)).toBeNull();
  });
  it("takes a number as seconds, and an empty string as none", () => {
    expect(parseDuration(45)).toBe(45);
    expect(parseDuration(" ")).toBe(0);
  });
});

describe("points in time and et-orbi's to_s", () => {
  it("reads a zone given as an offset, UTC or a name", () => {
    expect(parsePointInTime("2026-12-01 18:00:00 +0100")).toBe(Date.UTC(2026, 11, 1, 17));
    expect(parsePointInTime("2026/12/01 18:00 UTC")).toBe(Date.UTC(2026, 11, 1, 18));
    expect(parsePointInTime("2026-12-01 18:00:00 Europe/Paris")).toBe(Date.UTC(2026, 11, 1, 17));
    expect(parsePointInTime("2026-07-01 18:00:00 America/New_York")).toBe(Date.UTC(2026, 6, 1, 22));
  });
  it("reads a time without a zone as the process's local time, as Ruby does", () => {
    expect(parsePointInTime("2026-12-01 18:00:05")).toBe(new Date(2026, 11, 1, 18, 0, 5).getTime());
  });
  it("refuses what it cannot read", () => {
    expect(() => parsePointInTime("next tuesday")).toThrow(ScheduleSyntaxError);
  });
  it("writes %Y-%m-%d %H:%M:%S %z, in a zone or with an offset", () => {
    expect(formatEoTime(T0, "UTC")).toBe("2026-11-26 14:41:30 +0000");
    expect(formatEoTime(T0, "America/New_York")).toBe("2026-11-26 09:41:30 -0500");
    expect(formatEoTime(T0, 330)).toBe("2026-11-26 20:11:30 +0530");
    const local = formatEoTime(T0);
    expect(local).toMatch(/^2026-11-2\d \d\d:\d\d:30 [+-]\d{4}$/);
  });
});

describe("each kind's triggers", () => {
  it("cron: the next fugit fire time; the claim is the fire time just due", () => {
    const t = timingFor("cron", "*/5 * * * *", T0)!;
    expect(t.next).toBe(Date.UTC(2026, 10, 26, 14, 45));
    const late = Date.UTC(2026, 10, 26, 14, 45, 0, 400);
    expect(t.trigger(late)).toBe(Date.UTC(2026, 10, 26, 14, 45));
    expect(t.next).toBe(Date.UTC(2026, 10, 26, 14, 50));
  });
  it("cron: six fields (seconds) and a zone", () => {
    const t = timingFor("cron", "0 0 9 * * * America/New_York", T0)!;
    expect(t.next).toBe(Date.UTC(2026, 10, 27, 14));
    const s = timingFor("cron", "* * * * * *", T0)!;
    expect(s.next).toBe(Date.UTC(2026, 10, 26, 14, 41, 31));
  });
  it("cron: first_in delays the first trigger, times ends it", () => {
    const t = timingFor("cron", ["* * * * *", { first_in: "10m", times: 1 }], T0)!;
    expect(t.next).toBe(T0 + 600_000);
    expect(t.trigger(t.next!)).toBe(Math.floor((T0 + 600_000) / 1000) * 1000);
    expect(t.trigger(t.next!)).toBeNull();
    expect(t.next).toBeNull();
  });
  it("every: a cadence from the load, skipping triggers missed while late; the claim is the trigger", () => {
    const t = timingFor("every", "2s", T0)!;
    expect(t.next).toBe(T0 + 2000);
    expect(t.trigger(T0 + 2100)).toBe(T0 + 2100);
    expect(t.next).toBe(T0 + 4000);
    // Seven seconds late: the missed ones are not caught up.
    expect(t.trigger(T0 + 11_000)).toBe(T0 + 11_000);
    expect(t.next).toBe(T0 + 12_000);
  });
  it("every: first_in and last_in", () => {
    const t = timingFor("every", ["1m", { first_in: "5s", last_in: "90s" }], T0)!;
    expect(t.next).toBe(T0 + 5000);
    t.trigger(T0 + 5000);
    expect(t.next).toBe(T0 + 65_000);
    t.trigger(T0 + 65_000);
    expect(t.trigger(T0 + 125_000)).toBeNull();
  });
  it("every: refuses a frequency under rufus' 0.3 s and an unreadable duration", () => {
    expect(() => timingFor("every", "0.2", T0)).toThrow(/0.3 s/);
    expect(() => timingFor("every", "often", T0)).toThrow(ScheduleSyntaxError);
  });
  it("interval: counted from the end of the previous run", () => {
    const t = timingFor("interval", "10s", T0)!;
    expect(t.next).toBe(T0 + 10_000);
    t.trigger(T0 + 10_000);
    expect(t.next).toBeNull();
    t.done(T0 + 13_000);
    expect(t.next).toBe(T0 + 23_000);
  });
  it("in: once, that long after the load", () => {
    const t = timingFor("in", "30s", T0)!;
    expect(t.next).toBe(T0 + 30_000);
    expect(t.trigger(T0 + 30_100)).toBe(T0 + 30_100);
    expect(t.next).toBeNull();
  });
  it("at: once at its point, claimed for that point; already past when loaded, dropped", () => {
    const t = timingFor("at", "2026-11-26 15:00:00 +0000", T0)!;
    expect(t.next).toBe(Date.UTC(2026, 10, 26, 15));
    expect(t.trigger(Date.UTC(2026, 10, 26, 15, 0, 0, 290))).toBe(Date.UTC(2026, 10, 26, 15));
    expect(t.next).toBeNull();
    expect(timingFor("at", "2026-11-26 14:00:00 +0000", T0)).toBeNull();
  });
  it("reads a value with its options as [schedule, options]", () => {
    expect(splitScheduleValue(["1m", { first_in: "5s" }])).toEqual({ spec: "1m", opts: { first_in: "5s" } });
    expect(splitScheduleValue("1m")).toEqual({ spec: "1m", opts: {} });
    expect(splitScheduleValue(["1m"])).toEqual({ spec: "1m", opts: {} });
  });
  it("refuses an invalid cron line with fugit's reason", () => {
    expect(() => timingFor("cron", "61 * * * *", T0)).toThrow(/invalid cron line/);
    expect(() => timingFor("cron", "every day at noon", T0)).toThrow(/natural language/);
  });
});

describe("overlapping triggers", () => {
  it("are allowed unless the schedule's options say overlap: false, as rufus reads them", () => {
    expect(overlapAllowed("* * * * *")).toBe(true);
    expect(overlapAllowed(["* * * * *", { first_in: "5s" }])).toBe(true);
    expect(overlapAllowed(["* * * * *", { overlap: false }])).toBe(false);
    expect(overlapAllowed(["1m", { allow_overlap: false }])).toBe(false);
    expect(overlapAllowed(["1m", { allow_overlapping: false }])).toBe(false);
  });
});
