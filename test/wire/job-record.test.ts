import { describe, expect, it } from "vitest";
import {
  JobRecord,
  RawJson,
  RubyFloat,
  applyFailure,
  decodePayloadTime,
  decodeBacktrace,
  migratePayloadTimes,
  newJid,
  JID_PATTERN,
} from "../../src/core/wire/index.js";
import { loadCaptures } from "../captures.js";
import { parseJson } from "../../src/core/wire/json-scan.js";

const RAW =
  '{"retry":true,"queue":"default","zeta":{"2":1,"1":2},"args":[18446744073709551617,1.0,-0.5,"é\u2028",{"a":[],"b":{}},null,true],"class":"RecordJob","jid":"0a8a34cb214d7a58a697df0e","created_at":1795304991.5637472,"enqueued_at":1795304991.5637643,"x_unknown":1.0e+20}';

describe("JobRecord", () => {
  it("returns the original text when nothing changed", () => {
    expect(JobRecord.parse(RAW).toString()).toBe(RAW);
  });
  it("rewrites one member and keeps every other byte", () => {
    const rec = JobRecord.parse(RAW).set("queue", "low").set("retry_count", 0);
    expect(rec.toString()).toBe(RAW.replace('"queue":"default"', '"queue":"low"').replace(/}$/, ',"retry_count":0}'));
  });
  it("reads every member as parseJson of its raw text would, on the fast paths too", () => {
    const text =
      '{"s":"plain","e":"a\\"b\\\\c\\u00e9","n":-12.5e3,"z":0,"t":true,"f":false,"u":null,"big":-123456789012345678901,"o":{"k":[1,"x"]}}';
    const rec = JobRecord.parse(text);
    for (const key of rec.keys()) expect(rec.get(key)).toEqual(parseJson(rec.raw(key)!));
    expect(rec.get("e")).toBe('a"b\\c\u00e9');
    expect(rec.get("big")).toBe(-123456789012345678901n);
    // A value set later is read through the full parser.
    expect(rec.set("s", 'x"y').get("s")).toBe('x"y');
  });
  it("reads values with big integers intact", () => {
    const rec = JobRecord.parse(RAW);
    expect(rec.get("args")).toEqual([18446744073709551617n, 1, -0.5, "é\u2028", { a: [], b: {} }, null, true]);
    expect(rec.raw("args")).toBe('[18446744073709551617,1.0,-0.5,"é\u2028",{"a":[],"b":{}},null,true]');
  });
  it("deletes and re-adds keys at the end, like a Ruby Hash", () => {
    const rec = JobRecord.parse('{"a":1,"at":2.5,"b":3}').delete("at").set("c", new RubyFloat(4));
    expect(rec.toString()).toBe('{"a":1,"b":3,"c":4.0}');
  });
  it("builds new payloads in the given key order", () => {
    expect(
      JobRecord.fromEntries([
        ["class", "X"],
        ["args", []],
      ]).toString(),
    ).toBe('{"class":"X","args":[]}');
  });
  it("refuses text that is not one JSON object", () => {
    expect(() => JobRecord.parse("{not json")).toThrow(/position/);
    expect(() => JobRecord.parse('"str"')).toThrow(/expected a JSON object/);
  });
});

describe("jid", () => {
  it("is 24 lowercase hex characters and unique", () => {
    const a = newJid();
    expect(a).toMatch(JID_PATTERN);
    expect(newJid()).not.toBe(a);
  });
});

describe("applyFailure against real Sidekiq's retry records", () => {
  for (const cap of loadCaptures()) {
    const retry = cap.records.find((r) => r.kind === "retry")!;
    const dead = cap.records.find((r) => r.kind === "dead")!;
    it(`Sidekiq ${cap.sidekiq_version}: a second failure writes the fields, order and units Ruby wrote`, () => {
      const rec = JobRecord.parse(retry.raw!);
      const lines = decodeBacktrace(rec.get("error_backtrace"));
      const rubyDead = JobRecord.parse(dead.raw!);
      // The dead record's second failure came through add_to_queue, which refreshed enqueued_at.
      rec.set("enqueued_at", new RawJson(rubyDead.raw("enqueued_at")!));
      const count = applyFailure(
        rec,
        {
          errorClass: "ArgumentError",
          message: rubyDead.get("error_message") as string,
          backtrace: decodeBacktrace(rubyDead.get("error_backtrace")),
        },
        cap.sidekiq_version,
        decodePayloadTime(rubyDead.raw("retried_at")!),
      );
      expect(count).toBe(1);
      expect(rec.keys()).toEqual(rubyDead.keys());
      expect(lines.length).toBeGreaterThan(0);
      // Node's zlib (Chromium's fork) compresses differently from Ruby's stock zlib, so
      // the bytes differ; what every reader sees after inflating is identical.
      const ours = rec.get("error_backtrace") as string;
      const theirs = rubyDead.get("error_backtrace") as string;
      expect(decodeBacktrace(ours)).toEqual(decodeBacktrace(theirs));
      expect(ours.includes("\n")).toBe(theirs.includes("\n")); // MIME base64 before 7.2.1, strict after
      expect(Buffer.from(ours, "base64").subarray(0, 2)).toEqual(Buffer.from([0x78, 0x9c])); // a zlib stream, default level
      expect(rec.raw("retried_at")).toBe(rubyDead.raw("retried_at"));
      rec.set("error_backtrace", theirs);
      expect(rec.toString()).toBe(rubyDead.toString());
    });
  }
  it("truncates error_message to 10,000 characters, counting code points", () => {
    const rec = JobRecord.parse('{"class":"X","args":[],"queue":"q","retry_queue":"r"}');
    applyFailure(rec, { errorClass: "E", message: "😀".repeat(10_001) }, 8, 1_795_000_000_123);
    expect(Array.from(rec.get("error_message") as string)).toHaveLength(10_000);
    expect(rec.get("queue")).toBe("r");
    expect(rec.raw("failed_at")).toBe("1795000000123");
    expect(rec.has("error_backtrace")).toBe(false);
  });
  it("writes float seconds with a decimal point for dialects 6 and 7", () => {
    const rec = JobRecord.parse('{"class":"X","args":[],"queue":"q","backtrace":2}');
    applyFailure(rec, { errorClass: "E", message: "m", backtrace: ["a", "b", "c"] }, 7, 1_795_000_000_000);
    expect(rec.raw("failed_at")).toBe("1795000000.0");
    expect(decodeBacktrace(rec.get("error_backtrace"))).toEqual(["a", "b"]);
  });
});

describe("migratePayloadTimes", () => {
  it("moves 8.x milliseconds to float seconds and back, byte for byte", () => {
    const v8 =
      '{"class":"X","args":[1.0],"created_at":1795304991531,"enqueued_at":1795304991939,"failed_at":1795304991903,"retry_count":0}';
    const down = migratePayloadTimes(v8, 7);
    expect(down.record.toString()).toBe(
      '{"class":"X","args":[1.0],"created_at":1795304991.531,"enqueued_at":1795304991.939,"failed_at":1795304991.903,"retry_count":0}',
    );
    expect(down.changed).toEqual(["created_at", "enqueued_at", "failed_at"]);
    expect(migratePayloadTimes(down.record.toString(), 8).record.toString()).toBe(v8);
  });
  it("round-trips 10,000 millisecond stamps 8 -> 7 -> 8 exactly", () => {
    for (let i = 0; i < 10_000; i++) {
      const ms = 1_700_000_000_000 + Math.floor(Math.random() * 200_000_000_000);
      const v8 = `{"created_at":${ms}}`;
      expect(migratePayloadTimes(migratePayloadTimes(v8, 7).record.toString(), 8).record.toString()).toBe(v8);
    }
  });
  it("leaves a payload already in the target unit untouched", () => {
    const v7 = '{"created_at":1700000000.1234567,"enqueued_at":1795304991.5637472}';
    const r = migratePayloadTimes(v7, 6);
    expect(r.changed).toEqual([]);
    expect(r.record.toString()).toBe(v7);
  });
  it("leaves a foreign writer's integer seconds alone when moving to seconds (Ruby 6/7 read them right)", () => {
    // Once divided by 1000, Sidekiq 7 read this created_at as January 1970.
    const raw = '{"class":"X","created_at":1795305964,"enqueued_at":1795305964109}';
    const r = migratePayloadTimes(raw, 7);
    expect(r.changed).toEqual(["enqueued_at"]);
    expect(r.record.toString()).toBe('{"class":"X","created_at":1795305964,"enqueued_at":1795305964.109}');
  });
  it("turns a foreign writer's integer seconds into milliseconds for 8 (which reads an integer as ms)", () => {
    const r = migratePayloadTimes('{"class":"X","created_at":1795305964,"enqueued_at":1795305964109}', 8);
    expect(r.changed).toEqual(["created_at"]);
    expect(r.record.toString()).toBe('{"class":"X","created_at":1795305964000,"enqueued_at":1795305964109}');
  });
  it("reads an integral float-seconds lexeme as seconds, the way Ruby does", () => {
    expect(migratePayloadTimes('{"created_at":1795303599.0}', 8).record.toString()).toBe(
      '{"created_at":1795303599000}',
    );
  });
});
