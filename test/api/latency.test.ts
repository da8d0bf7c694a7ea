import { describe, expect, it } from "vitest";
import { jobLatency, latencyRuleFor } from "../../src/core/api/latency.js";

const NOW = 1_795_303_600_000.5; // epoch ms, half a millisecond past a whole one

describe("latency rule per release (api.rb)", () => {
  it("6.x and 7.x: enqueued_at only, taken as seconds; 8.0.0–8.1.0: typed enqueued_at; 8.1.1+: enqueued_at || created_at, typed", () => {
    expect(latencyRuleFor("6.4.1")).toBe("enqueued-seconds");
    expect(latencyRuleFor("7.3.10")).toBe("enqueued-seconds");
    expect(latencyRuleFor("8.0.0")).toBe("enqueued-typed");
    expect(latencyRuleFor("8.1.0")).toBe("enqueued-typed");
    expect(latencyRuleFor("8.1.1")).toBe("enqueued-or-created-typed");
    expect(latencyRuleFor("8.1.7")).toBe("enqueued-or-created-typed");
  });
});

describe("jobLatency", () => {
  const modern = "enqueued-or-created-typed" as const;

  it("reads a float lexeme as seconds and an integer as milliseconds (8.x)", () => {
    expect(jobLatency('{"enqueued_at":1795303590.0}', modern, NOW)).toBeCloseTo(10.0005, 6);
    // Ruby: (clock_gettime(:millisecond) - ts) / 1000.0 — the clock is truncated to whole ms.
    expect(jobLatency('{"enqueued_at":1795303590000}', modern, NOW)).toBe(10);
    expect(jobLatency('{"enqueued_at":1795303599999}', modern, NOW)).toBe(0.001);
  });

  it("an integral float keeps its `.0` meaning: seconds, not 1970 milliseconds", () => {
    expect(jobLatency('{"enqueued_at":1795303600.0}', modern, NOW)).toBeCloseTo(0, 3);
    expect(jobLatency('{"enqueued_at":1795303600}', modern, NOW)).toBeGreaterThan(1.7e9 - 1); // Ruby reads ms: ~57 years
  });

  it("falls back to created_at only from 8.1.1", () => {
    const job = '{"created_at":1795303580000}';
    expect(jobLatency(job, modern, NOW)).toBe(20);
    expect(jobLatency(job, "enqueued-typed", NOW)).toBe(0);
    expect(jobLatency(job, "enqueued-seconds", NOW)).toBe(0);
  });

  it("6.x/7.x take any number as seconds: an 8.x ms value gives a huge negative latency, as Ruby 7 shows it", () => {
    expect(jobLatency('{"enqueued_at":1795303590.25}', "enqueued-seconds", NOW)).toBeCloseTo(9.7505, 6);
    expect(jobLatency('{"enqueued_at":1795303590000}', "enqueued-seconds", NOW)).toBeCloseTo(
      1_795_303_600.0005 - 1_795_303_590_000,
      0,
    );
  });

  it("null and false are Ruby-falsy: `enqueued_at || created_at` moves on", () => {
    expect(jobLatency('{"enqueued_at":null,"created_at":1795303599.0}', modern, NOW)).toBeCloseTo(1.0005, 6);
    expect(jobLatency('{"enqueued_at":false,"created_at":1795303599000}', modern, NOW)).toBe(1);
  });

  it("an empty queue, text that is not a JSON object, or a non-numeric time gives 0", () => {
    expect(jobLatency(null, modern, NOW)).toBe(0);
    expect(jobLatency(undefined, modern, NOW)).toBe(0);
    expect(jobLatency("not json", modern, NOW)).toBe(0);
    expect(jobLatency("[1,2]", modern, NOW)).toBe(0);
    expect(jobLatency('{"enqueued_at":"yesterday"}', modern, NOW)).toBe(0);
    expect(jobLatency("{}", modern, NOW)).toBe(0);
  });

  it("uses the last of duplicate keys, as Ruby's JSON.parse does", () => {
    expect(jobLatency('{"enqueued_at":1,"enqueued_at":1795303595000}', modern, NOW)).toBe(5);
  });
});
