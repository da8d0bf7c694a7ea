// The Ruby forms of ActiveJob values Node writes, for cases worth naming; the
// differential test (interop-tests/rails-values.test.ts) checks thousands more against Rails.
import { describe, expect, it } from "vitest";
import { aj, ActiveJobSerializationError } from "../../src/core/client/activejob.js";
import { bigDecimalString } from "../../src/core/wire/big-decimal.js";
import { tzinfoName } from "../../src/core/wire/rails-time-zones.js";

describe("BigDecimal as Rails writes it", () => {
  it.each([
    ["12.50", "12.5"],
    ["1e3", "1000.0"],
    ["007.5", "7.5"],
    ["-0.0000000010", "-0.000000001"],
    ["-0", "-0.0"],
    [".5", "0.5"],
    ["1_000.5", "1000.5"],
    ["1_", "1.0"],
    [" 1.5\n", "1.5"],
    ["1d3", "1000.0"],
    ["+Infinity", "Infinity"],
    [" NaN ", "NaN"],
  ])("BigDecimal(%j).to_s is %j", (s, out) => expect(bigDecimalString(s)).toBe(out));

  it.each(["1.", "1.e5", "1__0", "_1", "1e", "nan", "-NaN", "1_.5", "1.5_", "1e_1", "0x10", ""])(
    "refuses %j as BigDecimal() does",
    (s) => expect(() => aj.bigDecimal(s)).toThrow(ActiveJobSerializationError),
  );
});

describe("time zones as Rails names them", () => {
  it("writes the tzinfo name of an ActiveSupport name, and keeps an IANA one", () => {
    const t = new Date(Date.UTC(2024, 0, 1, 0, 0, 0));
    expect(aj.timeWithZone(t, "Tokyo").json).toEqual({
      _aj_serialized: "ActiveJob::Serializers::TimeWithZoneSerializer",
      value: "2024-01-01T09:00:00.000000000+09:00",
      time_zone: "Asia/Tokyo",
    });
    expect(tzinfoName("Eastern Time (US & Canada)")).toBe("America/New_York");
    expect(tzinfoName("Europe/Paris")).toBe("Europe/Paris");
    expect((aj.timeWithZone(t, "UTC").json as { value: string }).value).toBe("2024-01-01T00:00:00.000000000Z");
    expect((aj.timeWithZone(t, "London").json as { value: string }).value).toBe("2024-01-01T00:00:00.000000000+00:00");
  });

  it("refuses an unknown zone by name, and a name in the wrong case (Rails' are case-sensitive)", () => {
    expect(() => aj.timeWithZone(new Date(0), "Tokyoo")).toThrow(/Unknown time zone "Tokyoo"/);
    expect(() => aj.timeWithZone(new Date(0), "asia/tokyo")).toThrow(/did you mean "Asia\/Tokyo"/);
  });

  it("a local mean time's seconds move the wall clock but not the written offset", () => {
    const t = new Date(Date.UTC(1880, 0, 1));
    expect((aj.timeWithZone(t, "Tokyo").json as { value: string }).value).toBe("1880-01-01T09:18:59.000000000+09:18");
  });
});

describe("times and durations", () => {
  it("writes nanoseconds from a bigint and years as Ruby does", () => {
    expect(
      (aj.time(-62135596800n * 1_000_000_000n - 86400n * 366n * 1_000_000_000n + 5n).json as { value: string }).value,
    ).toBe("0000-01-01T00:00:00.000000005Z");
    expect((aj.time(new Date(Date.UTC(10000, 0, 1))).json as { value: string }).value).toBe(
      "10000-01-01T00:00:00.000000000Z",
    );
  });

  it("sums a duration's parts as Rails does: a Float when a part is, zero parts dropped", () => {
    expect(aj.duration({ hours: 1, minutes: 30 }).json).toEqual(aj.duration(5400, { hours: 1, minutes: 30 }).json);
    const half = aj.duration({ hours: 1.5, minutes: 0 }).json as { value: unknown; parts: unknown[] };
    expect(half.value).toEqual(expect.objectContaining({ value: 5400 }));
    expect(half.parts).toHaveLength(1);
  });
});
