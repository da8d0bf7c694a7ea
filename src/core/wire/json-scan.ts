// A small, iterative JSON scanner that keeps the original text. Sidekiq payloads
// are rewritten by splicing raw member text, so unknown keys, key order, big
// integers and float lexemes (`1.0`) survive a round trip byte for byte.
import { RubyFloat, type RubyJsonValue } from "./ruby-json.js";
import { SIDEKIQ_PAYLOAD_KEY_NAMES } from "./sidekiq-payload-keys.js";

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

/** Whether the last string scanString scanned held a backslash escape. */
let stringHadEscape = false;

/** Scans a JSON string literal starting at the opening quote; returns the index after it. */
function scanString(text: string, i: number): number {
  i++; // opening quote
  stringHadEscape = false;
  for (;;) {
    if (i >= text.length) throw new WireParseError("unterminated string", i);
    const c = text.charCodeAt(i);
    if (c === 0x22) return i + 1;
    if (c < 0x20) throw new WireParseError("control character in string", i);
    if (c === 0x5c) {
      stringHadEscape = true;
      const e = text[i + 1];
      if (e === "u") {
        if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new WireParseError("bad \\u escape", i);
        i += 6;
      } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
      else throw new WireParseError("bad escape", i);
    } else i++;
  }
}

interface NumberLexeme {
  end: number;
  isFloat: boolean;
  /** An integer whose value a JS number cannot hold exactly. */
  isBig: boolean;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

/** Set by scanNumberEnd: the number just scanned is a float / an integer beyond 2^53. */
let numberIsFloat = false;
let numberIsBig = false;

/**
 * The end of the longest prefix at `i` matching JSON's number grammar
 * (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`); sets numberIsFloat and
 * numberIsBig. Char codes, not a regex: this runs for every number of every job.
 */
function scanNumberEnd(text: string, i: number): number {
  const start = i;
  if (text.charCodeAt(i) === 0x2d) i++;
  const first = text.charCodeAt(i);
  if (first === 0x30) i++;
  else if (first > 0x30 && first <= 0x39) while (isDigit(text.charCodeAt(++i)));
  else throw new WireParseError("bad number", start);
  let isFloat = false;
  if (text.charCodeAt(i) === 0x2e && isDigit(text.charCodeAt(i + 1))) {
    i += 2;
    while (isDigit(text.charCodeAt(i))) i++;
    isFloat = true;
  }
  const e = text.charCodeAt(i);
  if (e === 0x65 || e === 0x45) {
    let j = i + 1;
    const sign = text.charCodeAt(j);
    if (sign === 0x2b || sign === 0x2d) j++;
    if (isDigit(text.charCodeAt(j))) {
      while (isDigit(text.charCodeAt(++j)));
      i = j;
      isFloat = true;
    }
  }
  const digits = i - start - (text.charCodeAt(start) === 0x2d ? 1 : 0);
  numberIsFloat = isFloat;
  numberIsBig = !isFloat && digits >= 16 && !Number.isSafeInteger(Number(text.slice(start, i)));
  return i;
}

function scanNumber(text: string, i: number): NumberLexeme {
  const end = scanNumberEnd(text, i);
  return { end, isFloat: numberIsFloat, isBig: numberIsBig };
}

/** Set by scanValueEnd: some integer in the value just scanned is beyond 2^53. */
let valueHasBig = false;
/** The open containers of scanValueEnd (it never re-enters itself): 0x5b `[` or 0x7b `{`. */
const stack: number[] = [];

/** Validates one JSON value starting at `start` (whitespace allowed before it): returns the end, sets valueHasBig. */
function scanValueEnd(text: string, start: number): number {
  let i = skipWs(text, start);
  let hasBig = false;
  let depth = 0;
  let expectValue = true;
  for (;;) {
    i = skipWs(text, i);
    if (expectValue) {
      const c = text.charCodeAt(i);
      if (c === 0x7b || c === 0x5b) {
        stack[depth++] = c;
        i = skipWs(text, i + 1);
        if (text.charCodeAt(i) === c + 2) {
          // `}` and `]` are two code points after `{` and `[`.
          depth--;
          i++;
          expectValue = false;
          if (depth === 0) break;
        } else if (c === 0x7b) {
          i = scanKey(text, i);
        }
        continue;
      }
      if (c === 0x22) i = scanString(text, i);
      else if (c === 0x74 && text.startsWith("true", i)) i += 4;
      else if (c === 0x66 && text.startsWith("false", i)) i += 5;
      else if (c === 0x6e && text.startsWith("null", i)) i += 4;
      else if (c === 0x2d || isDigit(c)) {
        i = scanNumberEnd(text, i);
        hasBig ||= numberIsBig;
      } else throw new WireParseError(i >= text.length ? "unexpected end of input" : `unexpected '${text[i]}'`, i);
      expectValue = false;
      if (depth === 0) break;
      continue;
    }
    // After a value: close containers or move to the next element.
    const top = stack[depth - 1]!;
    const c = text.charCodeAt(i);
    if (c === 0x2c) {
      i = skipWs(text, i + 1);
      if (top === 0x7b) i = scanKey(text, i);
      expectValue = true;
    } else if (c === top + 2) {
      depth--;
      i++;
      if (depth === 0) break;
    } else throw new WireParseError(i >= text.length ? "unexpected end of input" : `unexpected '${text[i]}'`, i);
  }
  valueHasBig = hasBig;
  return i;
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
  /** Validated JSON holding no integer beyond 2^53: JSON.parse reads it exactly. */
  plain?: boolean;
}

/**
 * The keys splitting a payload reuses instead of copying each key, by first
 * char code: Sidekiq's (the one list) and those the add-ons write on every job
 * they touch (Pro's `bid`, sidekiq-unique-jobs' lock, the tracing's propagation
 * headers), which the wire layer may name but not import.
 */
const KNOWN_KEYS: Array<string[] | undefined> = [];
for (const k of [...SIDEKIQ_PAYLOAD_KEY_NAMES, "bid", "lock", "lock_args", "lock_digest", "trace_propagations"])
  (KNOWN_KEYS[k.charCodeAt(0)] ??= []).push(k);

/** The text between `start` and `end` (a key without escapes), as a known key's string when it is one. */
function keyText(text: string, start: number, end: number): string {
  const known = KNOWN_KEYS[text.charCodeAt(start)];
  if (known) for (const k of known) if (k.length === end - start && text.startsWith(k, start)) return k;
  return text.slice(start, end);
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
      const key = stringHadEscape ? (JSON.parse(text.slice(i, keyEnd)) as string) : keyText(text, i + 1, keyEnd - 1);
      i = skipWs(text, keyEnd);
      if (text[i] !== ":") throw new WireParseError("expected ':'", i);
      const valueStart = skipWs(text, i + 1);
      const end = scanValueEnd(text, valueStart);
      members.push({ key, raw: text.slice(valueStart, end), plain: !valueHasBig });
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
  const end = scanValueEnd(text, 0);
  if (skipWs(text, end) !== text.length) throw new WireParseError("trailing characters", end);
  if (!valueHasBig) return JSON.parse(text) as JsonValue;
  return parseWithBigInts(text) as JsonValue;
}

/**
 * parseJson, with every float lexeme kept as a RubyFloat, so that `1.0` is
 * written back as `1.0` (values passed through untouched, such as a custom
 * ActiveJob serializer's, re-encode byte for byte).
 */
export function parseJsonKeepingFloats(text: string): RubyJsonValue {
  const end = scanValueEnd(text, 0);
  if (skipWs(text, end) !== text.length) throw new WireParseError("trailing characters", end);
  return parseWithBigInts(text, true) as RubyJsonValue;
}

/** Slow path, only for text already validated and holding a big integer (or whose floats are kept). */
function parseWithBigInts(text: string, keepFloats = false): JsonValue | RubyJsonValue {
  // Swap each big integer (and kept float) for a unique string token, parse natively, then swap back.
  const bigs: Array<bigint | RubyFloat> = [];
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
      if (n.isBig || (keepFloats && n.isFloat)) {
        out += text.slice(last, i) + JSON.stringify(tag + bigs.length);
        bigs.push(n.isBig ? BigInt(text.slice(i, n.end)) : new RubyFloat(Number(text.slice(i, n.end))));
        last = n.end;
      }
      i = n.end;
    } else i++;
  }
  out += text.slice(last);
  const revive = (v: JsonValue): JsonValue => {
    if (typeof v === "string" && v.startsWith(tag)) return bigs[Number(v.slice(tag.length))] as JsonValue;
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
