import { describe, expect, it } from "vitest";
import {
  decodePayloadTime,
  encodePayloadTime,
  intSeconds,
  secondsString,
  toRubyJson,
  profileForVersion,
} from "../../src/wire/index.js";

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
