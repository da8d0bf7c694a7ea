// Real Sidekiq writes every record kind again, now: each record must validate
// against its dialect's schema and have the shape of the committed golden capture.
import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { JobRecord, validateRaw, validateRecord, type RecordKind } from "../src/core/wire/index.js";
import { capture, type CaptureDocument } from "../harness/capture.js";
import { backend, describeEachSidekiq } from "./support/harness.js";

const KINDS = new Set<RecordKind>([
  "job",
  "scheduled",
  "retry",
  "dead",
  "activejob",
  "process",
  "process-info",
  "work",
]);

function committed(version: string): CaptureDocument {
  return JSON.parse(
    readFileSync(new URL(`../ruby-fixtures/captures/${version}.json`, import.meta.url), "utf8"),
  ) as CaptureDocument;
}

describeEachSidekiq("golden captures from real Sidekiq", (sk) => {
  it("a fresh capture validates and matches the committed capture's records and key order", async () => {
    const fresh = await capture(backend(), sk.target, sk.db);
    const golden = committed(sk.target.version);
    expect(fresh.records.map((r) => `${r.kind}:${r.name}`)).toEqual(golden.records.map((r) => `${r.kind}:${r.name}`));
    for (const [i, rec] of fresh.records.entries()) {
      const kind = rec.kind as RecordKind;
      if (rec.kind === "dead-malformed") {
        expect(rec.raw).toBe("{not json");
        continue;
      }
      expect(KINDS.has(kind)).toBe(true);
      const result =
        kind === "process"
          ? validateRecord(sk.target.dialect, kind, rec.hash)
          : validateRaw(sk.target.dialect, kind, rec.raw!);
      expect(result, `${rec.kind} "${rec.name}"`).toEqual({ ok: true });
      // Same keys in the same order as when the fixtures were captured.
      const g = golden.records[i]!;
      if (rec.raw && g.raw) expect(JobRecord.parse(rec.raw).keys()).toEqual(JobRecord.parse(g.raw).keys());
      if (rec.hash && g.hash) expect(Object.keys(rec.hash).sort()).toEqual(Object.keys(g.hash).sort());
    }
  });
});
