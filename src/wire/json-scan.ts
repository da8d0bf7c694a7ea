// A small, iterative JSON scanner that keeps the original text. Sidekiq payloads
// are rewritten by splicing raw member text, so unknown keys, key order, big
// integers and float lexemes (`1.0`) survive a round trip byte for byte.

/** Text that is not valid JSON. */
export class WireParseError extends Error {
  override name = "WireParseError";
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at position ${position}`);
  }
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text.charCodeAt(i))) i++;
  return i;
}

/** Scans a JSON string literal starting at the opening quote; returns the index after it. */
function scanString(text: string, i: number): number {
  i++; // opening quote
  for (;;) {
    if (i >= text.length) throw new WireParseError("unterminated string", i);
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) throw new WireParseError("control character in string", i);
    if (c === 0x5c) {
      const e = text[i + 1];
      if (e === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new WireParseError("bad \\u escape", i);
        i += 6;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
      else throw new WireParseError("bad escape", i);
    } else i++;
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

export interface NumberLexeme {
  end: number;
  isFloat: boolean;
  /** An integer whose value a JS number cannot hold exactly. */
  isBig: boolean;
}

function scanNumber(text: string, i: number): NumberLexeme {
  NUMBER.lastIndex = i;
  const m = NUMBER.exec(text);
  if (!m || m[0] === "" || m[0] === "-") throw new WireParseError("bad number", i);
  const isFloat = m[1] !== undefined || m[2] !== undefined;
  const digits = m[0].length - (m[0][0] === "-" ? 1 : 0);
  const isBig = !isFloat && digits >= 16 && !Number.isSafeInteger(Number(m[0]));
  return { end: i + m[0].length, isFloat, isBig };
}

export interface ScanResult {
  end: number;
  /** True when some integer in the value is beyond 2^53. */
  hasBig: boolean;
}

/** Validates one JSON value starting at `start` (whitespace allowed before it). */
export function scanValue(text: string, start: number): ScanResult {
  let i = skipWs(text, start);
  let hasBig = false;
  // Each open container remembers whether it is an object, and whether it expects a key next.
  const stack: Array<"[" | "{"> = [];
  let expectValue = true;
  for (;;) {
    i = skipWs(text, i);
    if (expectValue) {
      const c = text[i];
      if (c === "{" || c === "[") {
        stack.push(c);
        i = skipWs(text, i + 1);
        const close = c === "{" ? "}" : "]";
        if (text[i] === close) {
          stack.pop();
          i++;
          expectValue = false;
          if (stack.length === 0) return { end: i, hasBig };
        } else if (c === "{") {
          i = scanKey(text, i);
        }
        continue;
      }
      if (c === '"') i = scanString(text, i);
      else if (c === "t" && text.startsWith("true", i)) i += 4;
      else if (c === "f" && text.startsWith("false", i)) i += 5;
      else if (c === "n" && text.startsWith("null", i)) i += 4;
      else if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) {
        const n = scanNumber(text, i);
        hasBig ||= n.isBig;
        i = n.end;
      } else throw new WireParseError(c === undefined ? "unexpected end of input" : `unexpected '${c}'`, i);
      expectValue = false;
      if (stack.length === 0) return { end: i, hasBig };
      continue;
    }
    // After a value: close containers or move to the next element.
    const top = stack[stack.length - 1]!;
    const c = text[i];
    if (c === ",") {
      i = skipWs(text, i + 1);
      if (top === "{") i = scanKey(text, i);
      expectValue = true;
    } else if ((c === "]" && top === "[") || (c === "}" && top === "{")) {
      stack.pop();
      i++;
      if (stack.length === 0) return { end: i, hasBig };
    } else throw new WireParseError(c === undefined ? "unexpected end of input" : `unexpected '${c}'`, i);
  }
}

/** Scans `"key"` and the colon; returns the index where the member's value starts. */
function scanKey(text: string, i: number): number {
  if (text[i] !== '"') throw new WireParseError("expected a string key", i);
  i = skipWs(text, scanString(text, i));
  if (text[i] !== ":") throw new WireParseError("expected ':'", i);
  return i + 1;
}

export interface RawMember {
  key: string;
  /** The member's value exactly as written. */
  raw: string;
}

/** Splits a JSON object into its members, each value kept as raw text. */
export function splitObject(text: string): RawMember[] {
  let i = skipWs(text, 0);
  if (text[i] !== "{") throw new WireParseError("expected a JSON object", i);
  const members: RawMember[] = [];
  i = skipWs(text, i + 1);
  if (text[i] === "}") i++;
  else {
    for (;;) {
      if (text[i] !== '"') throw new WireParseError("expected a string key", i);
      const keyEnd = scanString(text, i);
      const key = JSON.parse(text.slice(i, keyEnd)) as string;
      i = skipWs(text, keyEnd);
      if (text[i] !== ":") throw new WireParseError("expected ':'", i);
      const valueStart = skipWs(text, i + 1);
      const { end } = scanValue(text, valueStart);
      members.push({ key, raw: text.slice(valueStart, end) });
      i = skipWs(text, end);
      if (text[i] === ",") i = skipWs(text, i + 1);
      else if (text[i] === "}") {
        i++;
        break;
      } else throw new WireParseError(text[i] === undefined ? "unexpected end of input" : `unexpected '${text[i]}'`, i);
    }
  }
  i = skipWs(text, i);
  if (i !== text.length) throw new WireParseError("trailing characters after the object", i);
  return members;
}

/** A JSON value as the codec reads it (integers beyond 2^53 as bigint). */
export type JsonValue = null | boolean | number | bigint | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Parses JSON text into plain values. Integers beyond 2^53 become `bigint`
 * (a plain parse would silently round them).
 */
export function parseJson(text: string): JsonValue {
  const { end, hasBig } = scanValue(text, 0);
  if (skipWs(text, end) !== text.length) throw new WireParseError("trailing characters", end);
  if (!hasBig) return JSON.parse(text) as JsonValue;
  return parseWithBigInts(text);
}

/** Slow path, only for text already validated and holding a big integer. */
function parseWithBigInts(text: string): JsonValue {
  // Swap each big integer for a unique string token, parse natively, then swap back.
  const bigs: bigint[] = [];
  const tag = `\u0000big:${Math.random().toString(36).slice(2)}:`;
  let out = "";
  let i = 0;
  let last = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      i = scanString(text, i);
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      const n = scanNumber(text, i);
      if (n.isBig) {
        out += text.slice(last, i) + JSON.stringify(tag + bigs.length);
        bigs.push(BigInt(text.slice(i, n.end)));
        last = n.end;
      }
      i = n.end;
    } else i++;
  }
  out += text.slice(last);
  const revive = (v: JsonValue): JsonValue => {
    if (typeof v === "string" && v.startsWith(tag)) return bigs[Number(v.slice(tag.length))]!;
    if (Array.isArray(v)) return v.map(revive);
    if (v !== null && typeof v === "object" && typeof v !== "bigint") {
      const o: { [k: string]: JsonValue } = {};
      for (const [k, x] of Object.entries(v)) o[k] = revive(x);
      return o;
    }
    return v;
  };
  return revive(JSON.parse(out) as JsonValue);
}

/** True when the number lexeme is a float (Ruby parses it as Float). */
export function isFloatLexeme(raw: string): boolean {
  return /[.eE]/.test(raw);
}
