// Pure logic of `migrate timestamps`: which payload fields change, how, and
// that 8 -> 7 -> 8 gives back every byte of what real Sidekiq 8 wrote.
import { describe, expect, it } from "vitest";
import { convertPayloadTimes, needsConversion } from "../../src/tools/migration/convert-timestamps.js";
import { JobRecord } from "../../src/core/wire/index.js";
import { loadCaptures } from "../captures.js";

const JOB_KINDS = new Set(["job", "scheduled", "retry", "dead", "activejob"]);
const captures = loadCaptures();
const records = (version: string) =>
  captures
    .find((c) => c.sidekiq_version === version)!
    .records.filter((r) => JOB_KINDS.has(r.kind) && r.raw !== undefined);

describe("convertPayloadTimes", () => {
  it("takes every record real Sidekiq 8.1.7 wrote to float seconds and back, byte for byte", () => {
    const recs = records("8.1.7");
    expect(recs.length).toBeGreaterThan(5);
    for (const r of recs) {
      const to7 = convertPayloadTimes(r.raw!, 7);
      expect(to7.status, r.name).toBe("convert");
      const seven = JobRecord.parse(to7.raw!);
      for (const f of to7.fields) expect(seven.raw(f), `${r.name} ${f}`).toMatch(/^\d{10}\.\d{1,3}$/);
      // Only the time members changed.
      const orig = JobRecord.parse(r.raw!);
      expect(seven.keys()).toEqual(orig.keys());
      for (const k of orig.keys()) if (!to7.fields.includes(k)) expect(seven.raw(k)).toBe(orig.raw(k));
      const back = convertPayloadTimes(to7.raw!, 8);
      expect(back.status).toBe("convert");
      expect(back.raw, r.name).toBe(r.raw);
    }
  });

  it("leaves what Sidekiq 6.4.1 and 7.3.2 wrote alone when the target is 7, and converts it for 8", () => {
    for (const v of ["6.4.1", "7.3.2"]) {
      for (const r of records(v)) {
        expect(convertPayloadTimes(r.raw!, 7).status, `${v} ${r.name}`).toBe("target");
        expect(convertPayloadTimes(r.raw!, 6).status).toBe("target");
        const to8 = convertPayloadTimes(r.raw!, 8);
        expect(to8.status).toBe("convert");
        for (const f of to8.fields) expect(JobRecord.parse(to8.raw!).raw(f)).toMatch(/^\d{13}$/);
      }
    }
  });

  it("never re-encodes a field already in the target unit (microsecond floats keep their digits)", () => {
    const raw = '{"class":"X","created_at":1700000000.1234567,"enqueued_at":1795305964110}';
    const r = convertPayloadTimes(raw, 7);
    expect(r.fields).toEqual(["enqueued_at"]);
    expect(r.raw).toBe('{"class":"X","created_at":1700000000.1234567,"enqueued_at":1795305964.11}');
  });

  it("floors float seconds to whole milliseconds after rounding away binary noise", () => {
    expect(convertPayloadTimes('{"created_at":1795305964.109}', 8).raw).toBe('{"created_at":1795305964109}');
    expect(convertPayloadTimes('{"created_at":1795305964.1089999}', 8).raw).toBe('{"created_at":1795305964109}');
    expect(convertPayloadTimes('{"created_at":1795305964.1234567}', 8).raw).toBe('{"created_at":1795305964123}');
    expect(convertPayloadTimes('{"created_at":1795305964.0}', 8).raw).toBe('{"created_at":1795305964000}');
    expect(convertPayloadTimes('{"created_at":1795305964000}', 7).raw).toBe('{"created_at":1795305964.0}');
  });

  it("touches top-level time members only, not times nested in args", () => {
    const raw = '{"class":"X","args":[{"created_at":1795305964109}],"created_at":1795305964109}';
    const r = convertPayloadTimes(raw, 7);
    expect(r.raw).toBe('{"class":"X","args":[{"created_at":1795305964109}],"created_at":1795305964.109}');
    // Nested only: nothing to do (the quick pre-check says maybe; the parse says no).
    expect(convertPayloadTimes('{"class":"X","args":[{"created_at":1795305964109}]}', 7).status).toBe("target");
  });

  it("leaves integer seconds from foreign writers (below 1e11) alone: 6/7 already read them right", () => {
    expect(convertPayloadTimes('{"class":"X","created_at":1795305964}', 7).status).toBe("target");
  });

  it("sees through escaped key names and odd spacing", () => {
    const raw = '{"class":"X","\\u0063reated_at" : 1795305964109}';
    const r = convertPayloadTimes(raw, 7);
    expect(r.status).toBe("convert");
    expect(JobRecord.parse(r.raw!).raw("created_at")).toBe("1795305964.109");
    expect(needsConversion('{"class":"X","created_at" :\n 1795305964109}', 7)).toBe(true);
  });

  it("ignores null, strings and absent time fields, and calls non-objects unparseable", () => {
    expect(convertPayloadTimes('{"class":"X","created_at":null,"enqueued_at":"soon"}', 7).status).toBe("target");
    expect(convertPayloadTimes("not json", 7).status).toBe("unparseable");
    expect(convertPayloadTimes('{"created_at":1795305964109', 7).status).toBe("unparseable");
  });
});
