// Sidekiq's strict argument check (`on_complex_arguments`), for JavaScript
// values: only what Ruby's JSON.parse gives back unchanged may be enqueued.
import { RubyFloat } from "../wire/ruby-json.js";
import { SidekiqArgumentError } from "./errors.js";

/** What to do with arguments that are not JSON-native (Sidekiq's `strict_args!`): raise, warn, or off. */
export type StrictArgsMode = "raise" | "warn" | "off";

export interface UnsafeArg {
  /** Where the value sits, e.g. `args[1].user.id`. */
  path: string;
  /** What it is, e.g. "a Date", "undefined", "NaN". */
  what: string;
}

function describe(v: unknown): string | undefined {
  if (v === undefined) return "undefined";
  if (typeof v === "function") return "a function";
  if (typeof v === "symbol") return "a Symbol";
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (!Number.isFinite(v)) return String(v);
    if (Number.isInteger(v) && !Number.isSafeInteger(v))
      return "an integer beyond 2^53 that has already lost precision (use a bigint)";
    return undefined;
  }
  if (typeof v === "string") return v.isWellFormed() ? undefined : "a string with a lone UTF-16 surrogate";
  if (v === null || typeof v === "boolean" || typeof v === "bigint" || v instanceof RubyFloat) return undefined;
  if (Array.isArray(v)) return undefined;
  if (typeof v === "object") {
    const proto = Object.getPrototypeOf(v);
    if (proto === Object.prototype || proto === null) return undefined;
    return `a ${proto?.constructor?.name ?? "non-plain object"}`;
  }
  return typeof v;
}

/** The first value Ruby would not read back unchanged, or undefined. */
export function findUnsafeArg(args: unknown, path = "args"): UnsafeArg | undefined {
  const stack: Array<[unknown, string]> = [[args, path]];
  while (stack.length > 0) {
    const [v, p] = stack.pop()!;
    const what = describe(v);
    if (what) return { path: p, what };
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (!(i in v)) return { path: `${p}[${i}]`, what: "a hole in a sparse array" };
        stack.push([v[i], `${p}[${i}]`]);
      }
    } else if (v !== null && typeof v === "object" && !(v instanceof RubyFloat)) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${p}.${entries[i]![0]}`]);
    }
  }
  return undefined;
}

// How deep plainlySafe recurses before it leaves the walk to findUnsafeArg
// (iterative: any depth).
const RECURSION_DEPTH = 64;

/**
 * Whether nothing in `v` is unsafe, walked without allocating: a push checks
 * every job's arguments, and findUnsafeArg builds each value's path as it
 * goes (about 240 bytes a job of a bulk push, the most of any one step of
 * ours). False when something is unsafe or the nesting is deeper than
 * `depth`: findUnsafeArg then gives the answer and says where.
 */
function plainlySafe(v: unknown, depth: number): boolean {
  if (describe(v) !== undefined) return false;
  if (Array.isArray(v)) {
    if (depth === 0) return false;
    for (let i = 0; i < v.length; i++) if (!(i in v) || !plainlySafe(v[i], depth - 1)) return false;
  } else if (v !== null && typeof v === "object" && !(v instanceof RubyFloat)) {
    if (depth === 0) return false;
    for (const k of Object.keys(v)) if (!plainlySafe((v as Record<string, unknown>)[k], depth - 1)) return false;
  }
  return true;
}

/**
 * Sidekiq's verify_json: raise (7.0+ default), warn (6.4 default) or let the
 * value through (as JSON.stringify would turn it, like Ruby's warn mode does).
 */
export function verifyArgs(
  className: string,
  args: unknown[],
  mode: StrictArgsMode,
  warn: (m: string) => void = console.warn,
): unknown[] {
  if (plainlySafe(args, RECURSION_DEPTH)) return args;
  const bad = findUnsafeArg(args);
  if (!bad) return args;
  const msg = `Job arguments to ${className} must be native JSON types, but ${bad.path} is ${bad.what}. See https://github.com/sidekiq/sidekiq/wiki/Best-Practices. To allow it, create the client with strictArgs: "warn" or "off".`;
  if (mode === "raise") throw new SidekiqArgumentError(msg);
  if (mode === "warn") warn(msg);
  return toJsonNative(args) as unknown[];
}

/** What JSON.stringify would make of a value, keeping bigint and RubyFloat. */
function toJsonNative(v: unknown): unknown {
  if (typeof v === "bigint" || v instanceof RubyFloat) return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return null;
  if (typeof v === "string") return v.toWellFormed();
  if (v === null || typeof v !== "object") return v;
  if (typeof (v as { toJSON?: unknown }).toJSON === "function")
    return toJsonNative((v as { toJSON(): unknown }).toJSON());
  if (Array.isArray(v)) return Array.from(v, (x) => toJsonNative(x));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v))
    if (x !== undefined && typeof x !== "function" && typeof x !== "symbol") out[k] = toJsonNative(x);
  return out;
}
