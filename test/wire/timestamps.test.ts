import { afterEach, describe, expect, it, vi } from "vitest";
import { nowMs } from "../../src/core/wire/timestamps.js";
import {
  decodePayloadTime,
  encodePayloadTime,
  intSeconds,
  secondsString,
  toRubyJson,
  profileForVersion,
} from "../../src/core/wire/index.js";

describe("payload time units", () => {
  it("writes integer milliseconds for dialect 8", () => {
    expect(toRubyJson(encodePayloadTime(1_795_303_599_000.4, 8) as number)).toBe("1795303599000");
  });
  it("writes float seconds with a decimal point for dialects 6 and 7, even when integral", () => {
    // JSON.stringify(1795303599) would drop the ".0" and Sidekiq 8 would read milliseconds: 1970.
    expect(toRubyJson(encodePayloadTime(1_795_303_599_000, 7))).toBe("1795303599.0");
    expect(toRubyJson(encodePayloadTime(1_795_303_599_250, 6))).toBe("1795303599.25");
  });
  it("reads by lexeme like Ruby: float = seconds, integer = milliseconds", () => {
    expect(decodePayloadTime("1795303599.0")).toBe(1_795_303_599_000);
    expect(decodePayloadTime("1795303599")).toBe(1_795_303_599);
    expect(decodePayloadTime("1795303599000")).toBe(1_795_303_599_000);
  });
  it("reads by magnitude when the lexeme is gone", () => {
    expect(decodePayloadTime(1795303599)).toBe(1_795_303_599_000);
    expect(decodePayloadTime(1795303599123)).toBe(1_795_303_599_123);
  });
  it("writes scores as float seconds and run_at as integer seconds in every dialect", () => {
    expect(secondsString(1_795_303_599_000)).toBe("1795303599.0");
    expect(intSeconds(1_795_303_599_999)).toBe(1_795_303_599);
  });
});

describe("profiles", () => {
  it("pins the details that moved inside a major", () => {
    expect(profileForVersion("6.4.1")).toMatchObject({
      dialect: 6,
      workKey: "workers",
      backtraceBase64: "mime",
      beatSeconds: 5,
    });
    expect(profileForVersion("6.4.2")).toMatchObject({ workKey: "work" }); // moved in 6.4.2 (the reference says 6.5.0)
    expect(profileForVersion("7.2.0")).toMatchObject({ backtraceBase64: "mime" });
    expect(profileForVersion("7.3.2")).toMatchObject({ dialect: 7, backtraceBase64: "strict", payloadTime: "seconds" });
    expect(profileForVersion("8.1.7")).toMatchObject({
      dialect: 8,
      payloadTime: "millis",
      activeJobWrapper: "Sidekiq::ActiveJob::Wrapper",
    });
    expect(() => profileForVersion("5.2.10")).toThrow(/older than 6.0/);
  });
});

describe("the clock the bridge writes times with", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  // A monotonic clock and a wall clock `wall - mono` apart; Date.now() truncates the wall clock.
  function clocks(start: number) {
    const c = { mono: 1000.0625, apart: start };
    vi.spyOn(performance, "now").mockImplementation(() => c.mono);
    vi.spyOn(Date, "now").mockImplementation(() => Math.floor(c.mono + c.apart));
    return c;
  }
  const inDateNowsMillisecond = (v: number) => v >= Date.now() && v < Date.now() + 1;

  it("follows the wall clock when it jumps ahead (a suspended laptop, a paused VM) or steps back (NTP)", () => {
    const c = clocks(1_795_000_000_000.3);
    for (let i = 0; i < 50; i++, c.mono += 0.137) expect(inDateNowsMillisecond(nowMs())).toBe(true);
    // Asleep for an hour: the monotonic clock stood still, the wall clock did not.
    c.apart += 3_600_000;
    expect(inDateNowsMillisecond(nowMs())).toBe(true);
    expect(nowMs()).toBeGreaterThan(1_795_003_600_000);
    c.apart -= 5_000.5;
    c.mono += 0.2;
    expect(inDateNowsMillisecond(nowMs())).toBe(true);
    // Slewed a little at a time: never more than the millisecond Date.now() reads.
    for (let i = 0; i < 2000; i++, c.mono += 0.05, c.apart += 0.003) expect(inDateNowsMillisecond(nowMs())).toBe(true);
  });

  it("keeps sub-millisecond precision, as Ruby's Time.now does, once it has seen the millisecond turn", () => {
    const c = clocks(1_795_000_000_000.3);
    const seen: number[] = [];
    for (let i = 0; i < 50; i++, c.mono += 0.137) seen.push(nowMs());
    const last = seen.at(-1)!;
    expect(Math.abs(last - (c.mono - 0.137 + c.apart))).toBeLessThan(0.2);
    expect(Number.isInteger(last)).toBe(false);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
  });

  it("reads the real clocks within Date.now()'s millisecond", () => {
    for (let i = 0; i < 1000; i++) {
      const before = Date.now();
      const v = nowMs();
      expect(v).toBeGreaterThanOrEqual(before);
      expect(v).toBeLessThan(Date.now() + 1);
    }
  });
});
