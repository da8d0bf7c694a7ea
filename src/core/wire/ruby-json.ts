// Serialises JavaScript values exactly as Ruby's `JSON.generate` (what Sidekiq's
// `dump_json` uses) would: compact, raw UTF-8, `/` and U+2028 unescaped, and
// floats spelled the Ruby way (`1700000000.0`, `1.0e+15`, `1.0e-05`).

/** A number that must be written as a Ruby Float: always with a decimal point or exponent. */
export class RubyFloat {
  constructor(readonly value: number) {
    if (!Number.isFinite(value)) throw new WireEncodeError(`RubyFloat must be finite, got ${value}`);
  }
}

/** Already-encoded JSON text, spliced in verbatim (used to carry unparsed payload parts). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** A value that Ruby's JSON cannot represent. */
export class WireEncodeError extends Error {
  override name = "WireEncodeError";
}

/** A value `toRubyJson` writes as Ruby's `JSON.generate` would. */
export type RubyJsonValue =
  | null
  | boolean
  | number
  | bigint
  | string
  | RubyFloat
  | RawJson
  | RubyJsonValue[]
  | { [key: string]: RubyJsonValue | undefined };

/**
 * Ruby's `Float#to_s`, which json < 2.10 uses for floats: shortest round-trip
 * digits; fixed notation when there are fractional digits or the value is
 * integral below 1e15, and for 1e-4 <= |x| < 1; otherwise `d.ddde+XX`.
 * (json 2.10+ formats with its own fpconv; readers parse both to the same Float.)
 */
export function rubyFloatToS(x: number): string {
  if (!Number.isFinite(x)) {
    // Ruby's JSON.generate raises GeneratorError for NaN and Infinity; so do we.
    throw new WireEncodeError(`${x} is not allowed in JSON`);
  }
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, exp] = Math.abs(x).toExponential().split("e") as [string, string];
  const digits = mant.replace(".", "");
  const decpt = Number(exp) + 1; // position of the decimal point relative to the digits
  let body: string;
  if (decpt > 0 && decpt < digits.length) {
    // Fractional digits present: fixed notation (e.g. 4498948885593563.5).
    body = `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  } else if (decpt > 0 && decpt <= 15) {
    // Integral below 1e15: pad with zeros and mark as a Float.
    body = digits + "0".repeat(decpt - digits.length) + ".0";
  } else if (decpt <= 0 && decpt > -4) {
    body = `0.${"0".repeat(-decpt)}${digits}`;
  } else {
    const e = decpt - 1;
    body = `${digits[0]}.${digits.slice(1) || "0"}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  return sign + body;
}

/** Ruby's JSON string escaping equals JSON.stringify's for well-formed strings. */
function encodeString(s: string): string {
  const json = JSON.stringify(s);
  // Nothing escaped (the common case): JSON.stringify escapes a lone
  // surrogate, so a result only two quotes longer has none.
  if (json.length === s.length + 2) return json;
  // A lone surrogate cannot be UTF-8; Ruby refuses such strings, so do we.
  if (/[\uD800-\uDFFF]/.test(s) && !s.isWellFormed()) {
    throw new WireEncodeError("string contains a lone UTF-16 surrogate, which is not valid UTF-8");
  }
  return JSON.stringify(s);
}

function encodeNumber(n: number): string {
  if (!Number.isFinite(n)) throw new WireEncodeError(`${n} is not allowed in JSON`);
  if (Number.isInteger(n)) {
    if (!Number.isSafeInteger(n)) {
      throw new WireEncodeError(
        `integer ${n} is beyond 2^53 and has already lost precision; pass a bigint to write it exactly`,
      );
    }
    return Object.is(n, -0) ? "0" : String(n);
  }
  return rubyFloatToS(n);
}

/**
 * Encodes one value. Object keys keep insertion order (integer-like keys
 * excepted: a JS limit). Any depth is fine: a recursive encoder writes the
 * first FAST_DEPTH levels, the iterative one anything deeper. On a bad value
 * the iterative encoder runs the whole value again, so the error is always the
 * one it names first.
 */
export function toRubyJson(value: RubyJsonValue): string {
  try {
    return encodeFast(value, 0);
  } catch {
    return toRubyJsonIterative(value);
  }
}

/** Nesting the recursive encoder handles before it hands a subtree to the iterative one. */
const FAST_DEPTH = 200;

function encodeFast(v: RubyJsonValue, depth: number): string {
  switch (typeof v) {
    case "string":
      return encodeString(v);
    case "number":
      // Small integers (the common case) directly; -0 is written 0, as encodeNumber does.
      if ((v | 0) === v) return v === 0 ? "0" : String(v);
      return encodeNumber(v);
    case "boolean":
      return v ? "true" : "false";
    case "bigint":
      return v.toString();
    case "object": {
      if (v === null) return "null";
      if (depth >= FAST_DEPTH) return toRubyJsonIterative(v);
      if (Array.isArray(v)) {
        const n = v.length;
        if (n === 0) return "[]";
        let out = "[";
        for (let i = 0; i < n; i++) {
          const item = v[i];
          if (item === undefined) throw new WireEncodeError(`undefined at array index ${i} is not JSON`);
          out += i === 0 ? encodeFast(item, depth + 1) : "," + encodeFast(item, depth + 1);
        }
        return out + "]";
      }
      if (v instanceof RubyFloat) return rubyFloatToS(v.value);
      if (v instanceof RawJson) return v.text;
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new WireEncodeError(`${proto?.constructor?.name ?? "object"} is not a JSON-native value`);
      }
      const obj = v as { [key: string]: RubyJsonValue | undefined };
      let out = "{";
      for (const k of Object.keys(obj)) {
        const x = obj[k];
        if (x === undefined) continue;
        out += (out.length === 1 ? "" : ",") + encodeString(k) + ":" + encodeFast(x, depth + 1);
      }
      return out + "}";
    }
    default:
      throw new WireEncodeError(`${typeof v} is not a JSON value`);
  }
}

/**
 * The reference encoder: iterative, so any depth is fine. toRubyJson gives the
 * same text and the same first error; it uses this one beyond FAST_DEPTH and to
 * name the error when its fast path meets a bad value.
 * @internal exported for tests
 */
export function toRubyJsonIterative(value: RubyJsonValue): string {
  const out: string[] = [];
  // Iterative so that deeply nested values cannot overflow the call stack.
  const stack: Array<RubyJsonValue | Marker> = [value];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (isMarker(v)) {
      out.push(v.m);
      continue;
    }
    if (v === null) out.push("null");
    else if (v === true) out.push("true");
    else if (v === false) out.push("false");
    else if (typeof v === "number") out.push(encodeNumber(v));
    else if (typeof v === "bigint") out.push(v.toString());
    else if (typeof v === "string") out.push(encodeString(v));
    else if (v instanceof RubyFloat) out.push(rubyFloatToS(v.value));
    else if (v instanceof RawJson) out.push(v.text);
    else if (Array.isArray(v)) {
      out.push("[");
      stack.push(marker("]"));
      for (let i = v.length - 1; i >= 0; i--) {
        const item = v[i];
        if (item === undefined) throw new WireEncodeError(`undefined at array index ${i} is not JSON`);
        stack.push(item);
        if (i > 0) stack.push(marker(","));
      }
    } else if (typeof v === "object") {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) {
        throw new WireEncodeError(`${proto?.constructor?.name ?? "object"} is not a JSON-native value`);
      }
      const entries = Object.entries(v).filter(([, x]) => x !== undefined) as Array<[string, RubyJsonValue]>;
      out.push("{");
      stack.push(marker("}"));
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, x] = entries[i]!;
        stack.push(x);
        stack.push(marker(`${i > 0 ? "," : ""}${encodeString(k)}:`));
      }
    } else {
      throw new WireEncodeError(`${typeof v} is not a JSON value`);
    }
  }
  return out.join("");
}

const MARK = Symbol("marker");
interface Marker {
  [MARK]: true;
  m: string;
}
function marker(m: string): Marker {
  return { [MARK]: true, m } as Marker;
}
function isMarker(v: unknown): v is Marker {
  return typeof v === "object" && v !== null && MARK in v;
}
