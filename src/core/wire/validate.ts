// Validates wire records against the JSON Schemas in the package's schema/ directory
// (one schema per dialect and record kind, listed in schema/dialects.json).
//
// The schemas are read from disk on first use, added to a single Ajv (draft 2020-12)
// instance, and each one is compiled the first time it is needed and then cached.

import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv";
import type addFormatsModule from "ajv-formats";
import type { Dialect, RecordKind } from "./dialect.js";
import { parseJson } from "./json-scan.js";

// ajv and ajv-formats are loaded on the first validation, not with this module:
// a worker or client that never validates (validation is off by default outside
// tests) does not carry them (several MB of code and heap). They are CommonJS,
// so a require made here loads them synchronously; a bundler leaves the call to
// this local `require` alone. Both set `module.exports.default` to their export.
type Ajv2020 = InstanceType<(typeof Ajv2020Module)["default"]>;
const requireHere = createRequire(import.meta.url);

/**
 * schema/ at the package root. This module lives two levels below the root both as
 * src/core/wire/validate.ts (tsx, vitest) and as dist/core/wire/validate.js (after `npm run build`),
 * and `schema` is shipped in the package's `files`.
 */
const SCHEMA_DIR: URL = new URL("../../../schema/", import.meta.url);

/** One schema violation. */
export interface WireSchemaIssue {
  /** JSON pointer of the offending field, e.g. `/retry_count`, or `(root)` for the record itself. */
  field: string;
  /** The JSON Schema keyword that failed (ajv's `keyword`), or `json` when the text is not JSON. */
  rule: string;
  /** Human-readable explanation, without the field. */
  message: string;
}

/** The result of validating a record: ok, or the schema issues. */
export type WireValidationResult = { ok: true } | { ok: false; errors: WireSchemaIssue[] };

/** A record that does not match its schema (`assertValidRecord`). */
export class WireValidationError extends Error {
  override name = "WireValidationError";
  constructor(
    readonly dialect: Dialect,
    readonly kind: RecordKind,
    readonly issues: WireSchemaIssue[],
  ) {
    super(formatIssues(dialect, kind, issues));
  }
}

/** `v8 job: /created_at must be integer (type); /jid must match pattern "…" (pattern)` */
export function formatIssues(dialect: Dialect, kind: RecordKind, issues: readonly WireSchemaIssue[]): string {
  return `v${dialect} ${kind}: ${issues.map((i) => `${i.field} ${i.message} (${i.rule})`).join("; ")}`;
}

type DialectMap = Record<string, Record<string, string>>;

interface Registry {
  ajv: Ajv2020;
  /** dialect -> kind -> schema $id */
  ids: Map<string, string>;
  compiled: Map<string, ValidateFunction>;
}

let registry: Registry | undefined;

function readJson(url: URL): unknown {
  return JSON.parse(readFileSync(url, "utf8")) as unknown;
}

function schemaFiles(sub: string): URL[] {
  const dir = new URL(`${sub}/`, SCHEMA_DIR);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".schema.json"))
    .sort()
    .map((f) => new URL(f, dir));
}

function load(): Registry {
  if (registry) return registry;
  const Ajv2020 = (requireHere("ajv/dist/2020.js") as typeof Ajv2020Module).default;
  const addFormats = (requireHere("ajv-formats") as typeof addFormatsModule).default;
  const ajv = new Ajv2020({
    allErrors: true,
    // Strict about the schemas themselves (unknown keywords, missing types), except
    // `strictRequired`: the if/then and dependentRequired rules name properties that are
    // declared in the parent schema, which that check does not look at.
    strictSchema: true,
    strictNumbers: true,
    strictTypes: true,
    strictTuples: true,
    strictRequired: false,
    // `type: ["boolean", "integer"]` (retry, backtrace) and nullable ActiveJob fields.
    allowUnionTypes: true,
  });
  addFormats(ajv);
  const dialects = readJson(new URL("dialects.json", SCHEMA_DIR)) as DialectMap;
  // Every schema is registered under its $id; relative $refs (../common/…) resolve against it.
  const subdirs = ["common", ...Object.keys(dialects).map((d) => `v${d}`)];
  for (const sub of subdirs) for (const url of schemaFiles(sub)) ajv.addSchema(readJson(url) as object);
  const ids = new Map<string, string>();
  for (const [d, kinds] of Object.entries(dialects)) {
    for (const [kind, file] of Object.entries(kinds)) {
      const schema = readJson(new URL(file, SCHEMA_DIR)) as { $id?: string };
      if (!schema.$id) throw new Error(`schema/${file} has no $id`);
      ids.set(`${d}/${kind}`, schema.$id);
    }
  }
  registry = { ajv, ids, compiled: new Map() };
  return registry;
}

/** The `$id` of the schema for a dialect and kind (e.g. `https://sidekiq-bridge.dev/schema/v8/job.schema.json`). */
export function schemaIdFor(dialect: Dialect, kind: RecordKind): string {
  const id = load().ids.get(`${dialect}/${kind}`);
  if (!id)
    throw new Error(`no schema for dialect ${String(dialect)} kind ${JSON.stringify(kind)} in schema/dialects.json`);
  return id;
}

function validatorFor(dialect: Dialect, kind: RecordKind): ValidateFunction {
  const reg = load();
  const key = `${dialect}/${kind}`;
  const cached = reg.compiled.get(key);
  if (cached) return cached;
  const id = schemaIdFor(dialect, kind);
  const fn = reg.ajv.getSchema(id);
  if (!fn) throw new Error(`schema ${id} is not registered`);
  reg.compiled.set(key, fn);
  return fn;
}

function hasBigInt(v: unknown): boolean {
  if (typeof v === "bigint") return true;
  if (Array.isArray(v)) return v.some(hasBigInt);
  if (v !== null && typeof v === "object") return Object.values(v).some(hasBigInt);
  return false;
}

/**
 * A deep copy with every bigint replaced by `Number(b)`.
 *
 * `parseJson` returns integers beyond 2^53 as bigint so that nothing is rounded. Ajv only
 * knows JSON types: `typeof 1n` is "bigint", so such a value would fail `type: integer`
 * (and `type: number`). Converting to a Number is lossy but keeps what the schemas check:
 * every Number at or above 2^53 is integral, so `integer` still holds, and range checks
 * compare magnitudes far coarser than the rounding. The copy is used only for validation;
 * the caller's value is never modified.
 */
function withoutBigInts(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (Array.isArray(v)) return v.map(withoutBigInts);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      // defineProperty, so that a "__proto__" key stays an own data property.
      Object.defineProperty(out, k, { value: withoutBigInts(x), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

function pointer(base: string, prop: string): string {
  return `${base}/${prop.replace(/~/g, "~0").replace(/\//g, "~1")}`;
}

function toIssue(e: ErrorObject): WireSchemaIssue {
  const at = e.instancePath;
  switch (e.keyword) {
    case "required":
    case "dependentRequired": {
      const p = e.params as { missingProperty: string; property?: string };
      const message =
        e.keyword === "required" ? "is required" : `is required when ${p.property ?? "another property"} is present`;
      return { field: pointer(at, p.missingProperty), rule: e.keyword, message };
    }
    case "false schema":
      return { field: at || "(root)", rule: e.keyword, message: "must not be present" };
    default:
      return { field: at || "(root)", rule: e.keyword, message: e.message ?? "is invalid" };
  }
}

/** Validates an already-parsed record (bigints allowed) against the dialect's schema for `kind`. */
export function validateRecord(dialect: Dialect, kind: RecordKind, value: unknown): WireValidationResult {
  const fn = validatorFor(dialect, kind);
  const data = hasBigInt(value) ? withoutBigInts(value) : value;
  if (fn(data)) return { ok: true };
  const seen = new Set<string>();
  const errors: WireSchemaIssue[] = [];
  for (const e of fn.errors ?? []) {
    const issue = toIssue(e);
    const key = `${issue.field}\u0000${issue.rule}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    errors.push(issue);
  }
  return { ok: false, errors };
}

/** Like validateRecord, but throws a WireValidationError naming every failing field and rule. */
export function assertValidRecord(dialect: Dialect, kind: RecordKind, value: unknown): void {
  const r = validateRecord(dialect, kind, value);
  if (!r.ok) throw new WireValidationError(dialect, kind, r.errors);
}

/**
 * Parses `rawJson` losslessly (big integers become bigint) and validates the result.
 * Text that is not JSON gives a single issue with rule "json".
 */
export function validateRaw(dialect: Dialect, kind: RecordKind, rawJson: string): WireValidationResult {
  let value: unknown;
  try {
    value = parseJson(rawJson);
  } catch (err) {
    return {
      ok: false,
      errors: [{ field: "(root)", rule: "json", message: `is not valid JSON: ${(err as Error).message}` }],
    };
  }
  return validateRecord(dialect, kind, value);
}
