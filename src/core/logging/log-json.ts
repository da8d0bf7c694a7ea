// JSON for the log lines, written member by member: a job logs two lines,
// and a generic JSON.stringify per part (tid, msg, the copied context) cost
// more than the job. Each piece reads exactly as JSON.stringify writes it.

const jsonSafe = (_k: string, v: unknown): unknown => (typeof v === "bigint" ? v.toString() : v);

/** JSON.stringify, with a replacer only when needed (a bigint): the replacer doubles the cost. */
export function toJson(v: unknown): string {
  try {
    return JSON.stringify(v);
  } catch {
    return JSON.stringify(v, jsonSafe);
  }
}

/** What JSON.stringify escapes in a string: quote, backslash, control characters, (lone) surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: quoted as it is unless something in it needs escaping. */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * `"key":value` as JSON.stringify writes the member of an object, or "" when
 * it leaves it out (undefined, a function, a symbol). Objects (and bigints)
 * go through JSON.stringify with their key, for toJSON(key) and the bigint
 * replacer.
 */
export function jsonMember(key: string, v: unknown): string {
  switch (typeof v) {
    case "string":
      return `${jsonString(key)}:${jsonString(v)}`;
    case "number":
      return `${jsonString(key)}:${Number.isFinite(v) ? String(v) : "null"}`;
    case "boolean":
      return `${jsonString(key)}:${v ? "true" : "false"}`;
    case "undefined":
    case "function":
    case "symbol":
      return "";
    default: {
      if (v === null) return `${jsonString(key)}:null`;
      // `{"key":…}` without its braces.
      return toJson({ [key]: v }).slice(1, -1);
    }
  }
}
