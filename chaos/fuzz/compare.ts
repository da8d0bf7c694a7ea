// How a record Node rewrote is compared with the one Ruby rewrote from the
// same bytes. Every member must be byte for byte equal, in the same order,
// except what differs by clock or by language, which is compared by rule:
// - a time the operation wrote (created_at / enqueued_at / failed_at /
//   retried_at / discarded_at that the input did not hold with that value):
//   the same lexeme type (Float seconds or Integer ms, as the release writes
//   it) and an instant inside the clock window of the side that wrote it;
// - error_backtrace (a stack of another language): a non-empty string on both;
// - a retry's score: the release's delay plus at most its jitter past the window;
// - a Float's spelling, where Ruby's json is 2.10 or later: it writes floats with
//   its own formatter (0.0000003318 where Float#to_s, and Node, write 3.318e-07),
//   equal in value (interop-tests/json-parity.test.ts): compared by value.
import { JobRecord } from "../../src/core/wire/job-record.js";
import { rubyFloatToS } from "../../src/core/wire/ruby-json.js";
import { isFloatLexeme } from "../../src/core/wire/json-scan.js";
import { PAYLOAD_TIME_FIELDS } from "../../src/core/wire/timestamps.js";

/** The clock around an operation, epoch seconds. */
export interface Window {
  t0: number;
  t1: number;
}

/** A time lexeme's instant in epoch seconds by Ruby 8's rule: a Float is seconds, an Integer ms. */
export function instantOf(lexeme: string): number {
  const n = Number(lexeme);
  return isFloatLexeme(lexeme) ? n : n / 1000;
}

// Integer ms truncate; float seconds carry microseconds: allow a millisecond either side.
const SLACK = 0.001;

function timeProblem(name: string, raw: string | undefined, w: Window, unit: "seconds" | "millis"): string | undefined {
  if (raw === undefined) return `${name} is missing`;
  if (!/^\d/.test(raw)) return `${name} is ${raw}, not a number`;
  const isFloat = isFloatLexeme(raw);
  if (isFloat !== (unit === "seconds"))
    return `${name} is ${raw}: ${unit === "seconds" ? "Float seconds" : "Integer ms"} expected`;
  const t = instantOf(raw);
  if (t < w.t0 - SLACK || t > w.t1 + SLACK) return `${name} ${raw} is outside the operation's clock [${w.t0}, ${w.t1}]`;
  return undefined;
}

/** JSON text with every Float respelled as Float#to_s (strings left alone). */
export function floatsAsToS(json: string): string {
  return json.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (tok) =>
    tok.startsWith('"') || !/[.eE]/.test(tok) ? tok : rubyFloatToS(Number(tok)),
  );
}

/** Equal JSON texts, Floats compared by value. */
export function sameJson(a: string | undefined, b: string | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && floatsAsToS(a) === floatsAsToS(b));
}

export interface RecordComparison {
  /** The input both sides started from (its untouched times must stay byte for byte). */
  input: string;
  ruby: string;
  rubyWindow: Window;
  node: string;
  nodeWindow: Window;
  unit: "seconds" | "millis";
}

/** Differences between Ruby's and Node's rewrite of the same input; empty when they agree. */
export function compareRecords(c: RecordComparison): string[] {
  const problems: string[] = [];
  let ruby: JobRecord;
  let node: JobRecord;
  try {
    ruby = JobRecord.parse(c.ruby);
    node = JobRecord.parse(c.node);
  } catch (e) {
    return [`not a JSON object: ${(e as Error).message}`];
  }
  const input = JobRecord.parse(c.input);
  const rk = ruby.keys().join(",");
  const nk = node.keys().join(",");
  if (rk !== nk) problems.push(`key order differs:\n  ruby ${rk}\n  node ${nk}`);
  for (const key of new Set([...ruby.keys(), ...node.keys()])) {
    const r = ruby.raw(key);
    const n = node.raw(key);
    const was = input.raw(key);
    const written = (PAYLOAD_TIME_FIELDS as readonly string[]).includes(key) && !(sameJson(r, was) && sameJson(n, was));
    if (written) {
      const pr = timeProblem(`Ruby's ${key}`, r, c.rubyWindow, c.unit);
      const pn = timeProblem(`Node's ${key}`, n, c.nodeWindow, c.unit);
      if (pr) problems.push(pr);
      if (pn) problems.push(pn);
    } else if (key === "error_backtrace") {
      if (!(r?.startsWith('"') && r.length > 2 && n?.startsWith('"') && n.length > 2))
        problems.push(`error_backtrace: ruby ${r?.slice(0, 40)}, node ${n?.slice(0, 40)}`);
    } else if (!sameJson(r, n)) problems.push(`${key}: ruby ${r?.slice(0, 300)} node ${n?.slice(0, 300)}`);
  }
  return problems;
}

/** A score inside [t0 + lo, t1 + hi]. */
export function scoreProblem(name: string, score: string, w: Window, lo: number, hi: number): string | undefined {
  const s = Number(score);
  // Redis prints the double it stores, so an integral score reads back without ".0".
  if (!Number.isFinite(s)) return `${name} score ${score} is not a number`;
  if (s < w.t0 + lo - SLACK || s > w.t1 + hi + SLACK)
    return `${name} score ${score} is outside [${w.t0 + lo}, ${w.t1 + hi}]`;
  return undefined;
}
