// Decoding ActiveJob's serialized arguments for Node handlers: the inverse of
// src/core/client/activejob.ts. Ruby-only values come back as the small classes of
// wire/activejob-values.ts; a serializer this file does not know as AjSerialized.
import {
  AjDuration,
  AjModule,
  AjRange,
  AjSerialized,
  decodedFromRails,
  GlobalIdRef,
} from "../wire/activejob-values.js";
import { parseJson, parseJsonKeepingFloats, type JsonValue } from "../wire/json-scan.js";
import { RubyFloat, type RubyJsonValue } from "../wire/ruby-json.js";

export { AjSerialized, GlobalIdRef };

const MARKERS = ["_aj_symbol_keys", "_aj_ruby2_keywords", "_aj_hash_with_indifferent_access"];

type Obj = { [k: string]: RubyJsonValue };

function deserializeObject(o: Obj): unknown {
  const name = String(o._aj_serialized).replace(/^ActiveJob::Serializers::/, "");
  const value = o.value instanceof RubyFloat ? o.value.value : o.value;
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
    case "DurationSerializer": {
      const parts = (deserializeArgument(o.parts ?? []) as Array<[string, number]>).map(([k, n]) => [k, Number(n)]);
      return decodedFromRails(new AjDuration(Number(value), Object.fromEntries(parts)), o);
    }
    case "RangeSerializer":
      return decodedFromRails(
        new AjRange(deserializeArgument(o.begin ?? null), deserializeArgument(o.end ?? null), o.exclude_end === true),
        o,
      );
    case "ModuleSerializer":
      return new AjModule(String(value));
    default:
      return new AjSerialized(String(o._aj_serialized), o.value, o);
  }
}

/** ActiveJob::Arguments.deserialize for one value (records stay GlobalIdRef: Node has no models to load). */
export function deserializeArgument(v: JsonValue | RubyJsonValue): unknown {
  if (v instanceof RubyFloat) return v.value;
  if (Array.isArray(v)) return v.map(deserializeArgument);
  if (v === null || typeof v !== "object") return v;
  const o = v as Obj;
  if (typeof o._aj_globalid === "string" && Object.keys(o).length === 1) return new GlobalIdRef(o._aj_globalid);
  if (typeof o._aj_serialized === "string") return deserializeObject(o);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) if (!MARKERS.includes(k)) out[k] = deserializeArgument(x!);
  return out;
}

/** `job_data["arguments"]` of an ActiveJob payload's args[0], decoded; `args` as JSON text keeps float lexemes for AjSerialized. */
export function activeJobArguments(args: JsonValue | string): unknown[] {
  // Float lexemes matter only inside serialized objects (a custom serializer's AjSerialized.raw).
  const parsed =
    typeof args !== "string"
      ? args
      : args.includes('"_aj_serialized"')
        ? parseJsonKeepingFloats(args)
        : parseJson(args);
  const body = Array.isArray(parsed) ? parsed[0] : undefined;
  if (!body || typeof body !== "object" || Array.isArray(body) || body instanceof RubyFloat)
    throw new Error("ActiveJob payload has no job_data in args[0]");
  const list = (body as Obj).arguments;
  if (!Array.isArray(list)) throw new Error("ActiveJob job_data has no arguments array");
  return list.map(deserializeArgument);
}
