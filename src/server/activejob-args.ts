// Decoding ActiveJob's serialized arguments for Node handlers: the inverse of
// src/client/activejob.ts. Ruby-only values come back as small tagged shapes.
import type { JsonValue } from "../wire/json-scan.js";

/** A record reference (`GlobalID`), e.g. gid://app/User/1. */
export class GlobalIdRef {
  constructor(readonly gid: string) {}
}

/** A serialized Ruby object this decoder does not turn into a JS value. */
export class AjSerialized {
  constructor(
    readonly serializer: string,
    readonly value: JsonValue | undefined,
    readonly raw: { [k: string]: JsonValue },
  ) {}
}

const MARKERS = ["_aj_symbol_keys", "_aj_ruby2_keywords", "_aj_hash_with_indifferent_access"];

export function deserializeArgument(v: JsonValue): unknown {
  if (Array.isArray(v)) return v.map(deserializeArgument);
  if (v === null || typeof v !== "object") return v;
  const o = v as { [k: string]: JsonValue };
  if (typeof o._aj_globalid === "string" && Object.keys(o).length === 1) return new GlobalIdRef(o._aj_globalid);
  if (typeof o._aj_serialized === "string") {
    const name = o._aj_serialized.replace(/^ActiveJob::Serializers::/, "");
    const value = o.value;
    switch (name) {
      case "SymbolSerializer":
        return value;
      case "TimeSerializer":
      case "TimeWithZoneSerializer":
      case "DateTimeSerializer":
        return new Date(String(value));
      case "DateSerializer":
        return new Date(`${String(value)}T00:00:00Z`);
      case "BigDecimalSerializer":
        return String(value);
      default:
        return new AjSerialized(o._aj_serialized, value, o);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (!MARKERS.includes(k)) out[k] = deserializeArgument(x);
  return out;
}

/** `job_data["arguments"]` of an ActiveJob payload's args[0], decoded. */
export function activeJobArguments(args: JsonValue): unknown[] {
  const body = Array.isArray(args) ? args[0] : undefined;
  if (!body || typeof body !== "object" || Array.isArray(body))
    throw new Error("ActiveJob payload has no job_data in args[0]");
  const list = (body as { arguments?: JsonValue }).arguments;
  if (!Array.isArray(list)) throw new Error("ActiveJob job_data has no arguments array");
  return list.map(deserializeArgument);
}
