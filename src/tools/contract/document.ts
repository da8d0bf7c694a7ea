// The contract document (schema/contract/contract.schema.json): reading one
// (validated, with every problem named), writing one so that it diffs well in
// git (classes sorted, params in order, one field a line). Merging several
// apps' contracts is the client's (src/core/contract/merge.ts).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import type { JobClass, JobContract, Parameter } from "../../core/contract/generated/contract.js";
import { ContractFileError } from "../../core/contract/merge.js";

export type { JobClass, JobContract, Parameter } from "../../core/contract/generated/contract.js";
export { ContractFileError } from "../../core/contract/merge.js";

/** The contract format this release reads and writes. */
export const CONTRACT_VERSION = 1;

// Lives two levels below the package root as src/tools/contract/ and dist/tools/contract/.
const SCHEMA_URL = new URL("../../../schema/contract/contract.schema.json", import.meta.url);
const requireHere = createRequire(import.meta.url);
let validator: ValidateFunction | undefined;

function validate(): ValidateFunction {
  if (validator) return validator;
  const Ajv2020 = (requireHere("ajv/dist/2020.js") as typeof Ajv2020Module).default;
  const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true, strict: true });
  validator = ajv.compile(JSON.parse(readFileSync(SCHEMA_URL, "utf8")) as object);
  return validator;
}

/** Checks a parsed document against the contract schema; `where` names it in the error. */
export function parseContract(value: unknown, where = "contract"): JobContract {
  if (value && typeof value === "object" && "contract" in value && value.contract !== CONTRACT_VERSION) {
    throw new ContractFileError(
      `${where} is contract format ${JSON.stringify(value.contract)}; this sidekiq-bridge reads format ${CONTRACT_VERSION}: pull it again with this release`,
    );
  }
  const v = validate();
  if (!v(value)) {
    const problems = (v.errors ?? []).map((e) => `${e.instancePath || "(root)"} ${e.message ?? e.keyword}`);
    throw new ContractFileError(`${where} is not a valid contract: ${problems.join("; ")}`);
  }
  return value as JobContract;
}

/** Reads and checks a contract file. */
export function readContractFile(path: string): JobContract {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ContractFileError(`cannot read the contract ${path}: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ContractFileError(`${path} is not JSON: ${(e as Error).message}`);
  }
  return parseContract(value, path);
}

const CLASS_KEYS = ["kind", "location", "unchecked", "types", "params", "options", "activejob", "addons"] as const;
const PARAM_KEYS = ["name", "kind", "type", "default", "schema"] as const;

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object")
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

function ordered<T extends object>(obj: T, keys: readonly string[], rest: (v: unknown) => unknown): T {
  const out: Record<string, unknown> = {};
  for (const k of keys)
    if ((obj as Record<string, unknown>)[k] !== undefined) out[k] = (obj as Record<string, unknown>)[k];
  for (const k of Object.keys(obj).sort()) if (!(k in out)) out[k] = (obj as Record<string, unknown>)[k];
  for (const k of Object.keys(out)) if (k !== "params") out[k] = rest(out[k]);
  return out as T;
}

/**
 * The contract as it is committed: the same document always gives the same
 * bytes (classes by name, each class's fields in one order, option keys
 * sorted), two-space JSON with a final newline, so a change to one class is a
 * change to its lines only.
 */
export function stringifyContract(doc: JobContract): string {
  const classes: Record<string, JobClass> = {};
  for (const name of Object.keys(doc.classes).sort()) {
    const c = ordered(doc.classes[name]!, CLASS_KEYS, sortKeys);
    if (c.params) c.params = c.params.map((p) => ordered(p, PARAM_KEYS, sortKeys) as Parameter);
    classes[name] = c;
  }
  const out: JobContract = {
    contract: 1,
    app: doc.app,
    ...(doc.source ? { source: sortKeys(doc.source) as JobContract["source"] } : {}),
    ...(doc.activejob_defaults
      ? { activejob_defaults: sortKeys(doc.activejob_defaults) as JobContract["activejob_defaults"] }
      : {}),
    ...(doc.globalid_app !== undefined ? { globalid_app: doc.globalid_app } : {}),
    classes,
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
