// The wire JSON Schemas (schema/) against records real Sidekiq wrote, plus validate.ts
// and the generated types.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkGenerated } from "../scripts/gen-types.js";
import { DIALECTS, RECORD_KINDS, profileForVersion, type Dialect, type RecordKind } from "../src/core/wire/dialect.js";
import { parseJson } from "../src/core/wire/json-scan.js";
import {
  assertValidRecord,
  formatIssues,
  schemaIdFor,
  validateRaw,
  validateRecord,
  WireValidationError,
  type WireSchemaIssue,
} from "../src/core/wire/validate.js";
import { CAPTURE_DIR, type Capture, type CapturedRecord } from "./captures.js";

const SCHEMA_DIR = fileURLToPath(new URL("../schema/", import.meta.url));

interface CaptureFile {
  file: string;
  capture: Capture;
}

function loadDir(dir: string): CaptureFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, capture: JSON.parse(readFileSync(join(dir, file), "utf8")) as Capture }));
}

/** Dialects whose schema must reject a record of `kind` written in dialect `d`: where the format differs. */
function rejectingDialects(d: Dialect, kind: RecordKind): Dialect[] {
  switch (kind) {
    case "job":
    case "scheduled":
    case "retry":
    case "dead":
      // Payload times: Float seconds in 6.x/7.x, Integer milliseconds in 8.x.
      return d === 8 ? [6, 7] : [8];
    case "activejob":
      // Times as above, and the wrapper class changed in 8.0.
      return d === 8 ? [6, 7] : [8];
    case "process-info":
      // The required keys differ in every dialect (version/weights/embedded 7+, no concurrency 8.1.2+).
      return DIALECTS.filter((x) => x !== d);
    case "process":
    case "work":
      // Same format in every dialect (8.1.2's extra `concurrency` field is an unknown key to older readers).
      return [];
  }
}

function show(d: Dialect, kind: RecordKind, r: { ok: boolean; errors?: WireSchemaIssue[] }): string {
  return r.ok || !r.errors ? "valid" : formatIssues(d, kind, r.errors);
}

function recordValue(rec: CapturedRecord): unknown {
  if (rec.kind === "process") {
    if (!rec.hash) throw new Error(`process record "${rec.name}" has no hash`);
    return rec.hash;
  }
  if (rec.raw === undefined) throw new Error(`${rec.kind} record "${rec.name}" has no raw`);
  return parseJson(rec.raw);
}

function isRecordKind(k: string): k is RecordKind {
  return (RECORD_KINDS as readonly string[]).includes(k);
}

function checkCaptures(files: readonly CaptureFile[]): void {
  for (const { file, capture } of files) {
    describe(`${file} (Sidekiq ${capture.sidekiq_version})`, () => {
      const d = profileForVersion(capture.sidekiq_version).dialect;

      it("has records", () => {
        expect(capture.records.length).toBeGreaterThan(0);
      });

      for (const [i, rec] of capture.records.entries()) {
        const label = `#${i} ${rec.kind} "${rec.name}"`;

        if (rec.kind === "dead-malformed") {
          it(`${label} is not JSON (stored raw in the dead set, outside the schemas)`, () => {
            const r = validateRaw(d, "dead", rec.raw ?? "");
            expect(r.ok).toBe(false);
            if (!r.ok) expect(r.errors.map((e) => e.rule)).toEqual(["json"]);
          });
          continue;
        }

        it(`${label} validates against v${d}/${rec.kind}.schema.json`, () => {
          expect(isRecordKind(rec.kind), `unknown record kind ${rec.kind}`).toBe(true);
          const kind = rec.kind as RecordKind;
          const r = validateRecord(d, kind, recordValue(rec));
          expect(r.ok, show(d, kind, r)).toBe(true);
        });

        if (isRecordKind(rec.kind)) {
          const kind = rec.kind;
          for (const other of rejectingDialects(d, kind)) {
            it(`${label} is rejected by v${other}/${kind}.schema.json`, () => {
              expect(validateRecord(other, kind, recordValue(rec)).ok).toBe(false);
            });
          }
        }

        if (rec.score !== undefined) {
          it(`${label} has a Float-seconds score`, () => {
            // Sorted-set scores are epoch seconds in every version (never milliseconds).
            const s = Number(rec.score);
            expect(Number.isFinite(s)).toBe(true);
            expect(s).toBeLessThan(1e11);
          });
        }

        if (rec.kind === "work") {
          it(`${label}: the double-encoded payload is a v${d} job`, () => {
            const work = parseJson(rec.raw ?? "") as { payload?: unknown };
            expect(typeof work.payload).toBe("string");
            const r = validateRaw(d, "job", work.payload as string);
            expect(r.ok, show(d, "job", r)).toBe(true);
          });
        }

        if (rec.kind === "process") {
          it(`${label}: the info field is a v${d} process-info`, () => {
            const r = validateRaw(d, "process-info", rec.hash?.info ?? "");
            expect(r.ok, show(d, "process-info", r)).toBe(true);
          });
        }
      }
    });
  }
}

describe("real Sidekiq captures (ruby-fixtures/captures/)", () => {
  const files = loadDir(CAPTURE_DIR);
  it("holds a capture for every release of the matrix", () => {
    expect(files.map((f) => f.capture.sidekiq_version).sort(), `run npm run fixtures:capture`).toEqual([
      "6.4.1",
      "7.3.2",
      "8.1.7",
    ]);
  });
  checkCaptures(files);
});

// ---------------------------------------------------------------------------------------

function walkSchemas(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walkSchemas(p));
    else if (e.name.endsWith(".schema.json")) out.push(p);
  }
  return out.sort();
}

function findKeys(node: unknown, path: string, visit: (key: string, value: unknown, path: string) => void): void {
  if (Array.isArray(node)) node.forEach((x, i) => findKeys(x, `${path}/${i}`, visit));
  else if (node !== null && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      visit(k, v, `${path}/${k}`);
      findKeys(v, `${path}/${k}`, visit);
    }
  }
}

describe("schema files", () => {
  const files = walkSchemas(SCHEMA_DIR);

  it("dialects.json maps every dialect and record kind to an existing schema", () => {
    const map = JSON.parse(readFileSync(join(SCHEMA_DIR, "dialects.json"), "utf8")) as Record<
      string,
      Record<string, string>
    >;
    expect(Object.keys(map).sort()).toEqual(DIALECTS.map(String).sort());
    for (const d of DIALECTS) {
      expect(Object.keys(map[String(d)] ?? {}).sort()).toEqual([...RECORD_KINDS].sort());
      for (const kind of RECORD_KINDS) {
        const rel = map[String(d)]?.[kind];
        expect(rel).toBe(`v${d}/${kind}.schema.json`);
        expect(existsSync(join(SCHEMA_DIR, rel!))).toBe(true);
        expect(schemaIdFor(d, kind)).toBe(`https://sidekiq-bridge.dev/schema/v${d}/${kind}.schema.json`);
      }
    }
  });

  for (const file of files) {
    const rel = relative(SCHEMA_DIR, file).split(sep).join("/");
    it(`${rel}: draft 2020-12 with $id, title, description; unknown keys never forbidden`, () => {
      const s = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      expect(s.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
      expect(s.$id).toBe(`https://sidekiq-bridge.dev/schema/${rel}`);
      expect(typeof s.title).toBe("string");
      expect(typeof s.description).toBe("string");
      findKeys(s, "", (key, value, path) => {
        expect(key, `${rel}${path}`).not.toBe("unevaluatedProperties");
        if (key === "additionalProperties") expect(value, `${rel}${path}`).not.toBe(false);
        if (key === "$ref") expect(String(value), `${rel}${path}`).not.toMatch(/^[a-z]+:/);
      });
      if (!rel.startsWith("common/")) expect(s.additionalProperties, rel).not.toBeUndefined();
    });
  }
});

// ---------------------------------------------------------------------------------------

const JID = "0123456789abcdef01234567";
const MS = 1795304991521;
const S = 1795304991.5630438;

describe("validate.ts", () => {
  const v8job = {
    retry: true,
    queue: "default",
    class: "HardJob",
    args: [1],
    jid: JID,
    created_at: MS,
    enqueued_at: MS,
  };
  const v7job = { ...v8job, created_at: S, enqueued_at: S };

  it("accepts unknown keys in payloads (any sidekiq_options key)", () => {
    expect(validateRecord(8, "job", { ...v8job, my_option: { nested: [1] }, trace_propagation_headers: {} })).toEqual({
      ok: true,
    });
  });

  it("reports each failing field as a JSON pointer with the ajv keyword", () => {
    const r = validateRecord(8, "job", { ...v8job, created_at: S, jid: "XYZ" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors).toContainEqual({ field: "/created_at", rule: "type", message: "must be integer" });
    expect(r.errors).toContainEqual({ field: "/jid", rule: "pattern", message: 'must match pattern "^[0-9a-f]{24}$"' });
  });

  it("assertValidRecord throws a WireValidationError naming dialect, kind, fields and rules", () => {
    let err: unknown;
    try {
      assertValidRecord(8, "job", { ...v8job, created_at: S, jid: "XYZ" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(WireValidationError);
    const e = err as WireValidationError;
    expect(e.name).toBe("WireValidationError");
    expect(e.message).toMatch(/^v8 job: /);
    expect(e.message).toContain("/created_at must be integer (type)");
    expect(e.message).toContain('/jid must match pattern "^[0-9a-f]{24}$" (pattern)');
    expect(e.issues.map((i) => i.field)).toContain("/jid");
    expect(() => assertValidRecord(7, "job", v7job)).not.toThrow();
  });

  it("names a missing required property as the field", () => {
    const { enqueued_at: _drop, ...noEnqueuedAt } = v8job;
    const r = validateRecord(8, "job", noEnqueuedAt);
    expect(r).toEqual({ ok: false, errors: [{ field: "/enqueued_at", rule: "required", message: "is required" }] });
    const root = validateRecord(8, "job", []);
    expect(root.ok).toBe(false);
    if (!root.ok) expect(root.errors[0]).toEqual({ field: "(root)", rule: "type", message: "must be object" });
  });

  it("rejects `at` in a stored payload and enqueued_at in a 7.x/8.x scheduled entry", () => {
    const { enqueued_at: _e, ...sched } = v8job;
    expect(validateRecord(8, "scheduled", sched).ok).toBe(true);
    const r = validateRecord(8, "scheduled", { ...sched, at: 1795308591.5, enqueued_at: MS });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toContainEqual({ field: "/at", rule: "false schema", message: "must not be present" });
      expect(r.errors).toContainEqual({ field: "/enqueued_at", rule: "false schema", message: "must not be present" });
    }
    // 6.x leaves a caller's enqueued_at on scheduled entries.
    expect(validateRecord(6, "scheduled", { ...v7job }).ok).toBe(true);
  });

  it("retry entries need retried_at once retry_count >= 1", () => {
    const retry = { ...v8job, error_message: "boom", error_class: "RuntimeError", failed_at: MS, retry_count: 0 };
    expect(validateRecord(8, "retry", retry).ok).toBe(true);
    const r = validateRecord(8, "retry", { ...retry, retry_count: 2 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toContainEqual({ field: "/retried_at", rule: "required", message: "is required" });
    expect(validateRecord(8, "retry", { ...retry, retry_count: 2, retried_at: MS + 1 }).ok).toBe(true);
  });

  it("dead entries: the retry fields come together (killed scheduled jobs have none)", () => {
    expect(validateRecord(8, "dead", v8job).ok).toBe(true);
    const r = validateRecord(8, "dead", { ...v8job, error_class: "RuntimeError", error_message: "x", retry_count: 0 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toContainEqual({
        field: "/failed_at",
        rule: "dependentRequired",
        message: "is required when error_class is present",
      });
    }
  });

  it("checks the backtrace encoding per dialect (MIME base64 in 6.x, strict from 7.2.1)", () => {
    const strict = "eJyLVqrQK0qyMlSKBQAQfgLi";
    const mime = `${strict}\n`;
    const base = { ...v7job, backtrace: true, error_message: "m", error_class: "E", failed_at: S, retry_count: 0 };
    expect(validateRecord(6, "retry", { ...base, error_backtrace: mime }).ok).toBe(true);
    expect(validateRecord(6, "retry", { ...base, error_backtrace: strict }).ok).toBe(false);
    expect(validateRecord(7, "retry", { ...base, error_backtrace: mime }).ok).toBe(true);
    expect(validateRecord(7, "retry", { ...base, error_backtrace: strict }).ok).toBe(true);
    const b8 = { ...base, created_at: MS, enqueued_at: MS, failed_at: MS };
    expect(validateRecord(8, "retry", { ...b8, error_backtrace: strict }).ok).toBe(true);
    const r = validateRecord(8, "retry", { ...b8, error_backtrace: mime });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatchObject({ field: "/error_backtrace", rule: "pattern" });
  });

  it("process hash values must be strings, unknown fields included", () => {
    const hash = {
      info: '{"hostname":"vm"}',
      busy: "0",
      beat: "1795305001.9036272",
      rtt_us: "33",
      quiet: "false",
      rss: "1",
    };
    expect(validateRecord(7, "process", hash).ok).toBe(true);
    const r = validateRecord(7, "process", { ...hash, quiet: false, extra: 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toContainEqual({ field: "/quiet", rule: "type", message: "must be string" });
      expect(r.errors).toContainEqual({ field: "/extra", rule: "type", message: "must be string" });
    }
    expect(validateRecord(7, "process", { ...hash, beat: "1795305001903" }).ok).toBe(false);
  });

  it("validateRaw: text that is not JSON is one issue with rule json", () => {
    const r = validateRaw(8, "dead", "{not json");
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatchObject({ field: "(root)", rule: "json" });
    }
  });

  it("validateRaw: integers beyond 2^53 (bigint after parseJson) validate as integers", () => {
    const raw = `{"class":"X","args":[18446744073709551617],"jid":"${JID}","queue":"q","retry":18446744073709551617,"created_at":${MS},"enqueued_at":${MS}}`;
    expect(validateRaw(8, "job", raw)).toEqual({ ok: true });
    // A bigint where a float-seconds time belongs is still caught by the range.
    const bad = raw.replace(`"created_at":${MS}`, `"created_at":18446744073709551617`);
    const r = validateRaw(8, "job", bad);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors).toContainEqual(expect.objectContaining({ field: "/created_at", rule: "exclusiveMaximum" }));
  });

  it("validateRecord does not modify a value holding bigints", () => {
    const value = { ...v8job, args: [2n ** 64n], created_at: BigInt(MS) };
    expect(validateRecord(8, "job", value)).toEqual({ ok: true });
    expect(value.args[0]).toBe(2n ** 64n);
    expect(value.created_at).toBe(BigInt(MS));
  });

  it("an ActiveJob payload must carry its dialect's wrapper class", () => {
    const aj = {
      retry: true,
      queue: "default",
      wrapped: "MyJob",
      args: [
        {
          job_class: "MyJob",
          job_id: "f085d010-2cfe-466e-b61a-7011c1b43538",
          provider_job_id: null,
          queue_name: "default",
          priority: null,
          arguments: [],
          executions: 0,
          exception_executions: {},
          locale: "en",
          timezone: null,
          enqueued_at: "2026-11-21T23:50:04.248190448Z",
          scheduled_at: null,
        },
      ],
      class: "Sidekiq::ActiveJob::Wrapper",
      jid: JID,
      created_at: MS,
      enqueued_at: MS,
    };
    expect(validateRecord(8, "activejob", aj)).toEqual({ ok: true });
    const old = validateRecord(8, "activejob", {
      ...aj,
      class: "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
    });
    expect(old.ok).toBe(false);
    if (!old.ok) expect(old.errors).toContainEqual(expect.objectContaining({ field: "/class", rule: "const" }));
    const two = validateRecord(8, "activejob", { ...aj, args: [aj.args[0], aj.args[0]] });
    expect(two.ok).toBe(false);
    if (!two.ok) expect(two.errors).toContainEqual(expect.objectContaining({ field: "/args", rule: "maxItems" }));
  });

  it("throws for an unknown dialect or kind", () => {
    expect(() => validateRecord(9 as Dialect, "job", {})).toThrow(/no schema/);
    expect(() => validateRecord(8, "nope" as RecordKind, {})).toThrow(/no schema/);
  });
});

describe("generated types (npm run gen:check)", () => {
  it("src/core/wire/generated/ is up to date with schema/", async () => {
    const r = await checkGenerated();
    expect(
      r,
      `stale: ${r.stale.join(", ")}; missing: ${r.missing.join(", ")}; extra: ${r.extra.join(", ")} – run npm run gen`,
    ).toEqual({
      ok: true,
      stale: [],
      missing: [],
      extra: [],
    });
    // Compiling every schema with json-schema-to-typescript takes seconds on a busy 2-core machine.
  }, 60_000);
});
