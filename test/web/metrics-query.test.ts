import { describe, expect, it } from "vitest";
import { averageSeconds } from "../../src/core/api/metrics-query.js";
import { minuteKey7, minuteKey8, tenMinuteKey8 } from "../../src/core/wire/metrics-keys.js";
import { niceMax } from "../../src/tools/web/chart.js";

describe("metrics keys of every release", () => {
  const t = new Date(Date.UTC(2026, 10, 21, 3, 4, 30));
  it("8.x: j|%y%m%d|%-H:%M and its ten-minute rollup", () => {
    expect(minuteKey8(t)).toBe("j|261121|3:04");
    expect(tenMinuteKey8(t)).toBe("j|261121|3:0");
    expect(minuteKey8(new Date(Date.UTC(2026, 10, 21, 23, 24)))).toBe("j|261121|23:24");
  });
  it("7.x: j|%Y%m%d|%-H:%-M", () => {
    expect(minuteKey7(t)).toBe("j|20261121|3:4");
  });
  it("averages over successful executions, as JobResult#total_avg", () => {
    expect(averageSeconds({ p: 10, f: 2, ms: 4000, series: { p: [], f: [], ms: [] } })).toBe(0.5);
    expect(averageSeconds({ p: 2, f: 2, ms: 0, series: { p: [], f: [], ms: [] } })).toBe(0);
  });
  it("picks a round top for a chart's axis", () => {
    expect(niceMax(0)).toBe(1);
    expect(niceMax(3.2)).toBe(5);
    expect(niceMax(99)).toBe(100);
    expect(niceMax(101)).toBe(200);
  });
});
