// Generated Ruby values for the differential test of Node's ActiveJob value
// helpers against Rails (interop-tests/rails-values.test.ts, Ruby side
// ruby-fixtures/rails-app/bin/values.rb): BigDecimal strings in every form
// `BigDecimal()` reads (and some it refuses), times with nanoseconds in every
// ActiveSupport::TimeZone and IANA zone, durations of every combination of
// parts, ranges over every endpoint type. A case is data both sides build
// their value from: Ruby with its own constructors, Node with the `aj` helpers.
import { aj, AjValue } from "../../src/core/client/activejob.js";
import { RAILS_TIME_ZONES } from "../../src/core/wire/rails-time-zones.js";
import { RubyFloat, type RubyJsonValue } from "../../src/core/wire/ruby-json.js";
import { caseSeed, Rng } from "./prng.js";

/** A value both sides build: see values.rb for the Ruby of each. */
export type ValueCase =
  | { t: "bd"; s: string }
  | { t: "time" | "datetime"; ns: string }
  | { t: "tz"; ns: string; zone: string }
  | { t: "date"; ymd: string }
  | { t: "dur"; parts: Array<[string, number]> }
  | { t: "range"; b: ValueCase | null; e: ValueCase | null; x: boolean }
  | { t: "int"; v: number }
  | { t: "float"; s: string }
  | { t: "str" | "sym"; v: string };

const PARTS = ["years", "months", "weeks", "days", "hours", "minutes", "seconds"] as const;
const SPACES = [" ", "\t", "\n", "\v", "\f", "\r"];

const digits = (r: Rng, n: number) => Array.from({ length: n }, () => r.int(10)).join("");
/** Digits, now and then joined by underscores (or by two, or ending in one: refused but in the integer part). */
function digitRun(r: Rng, n: number): string {
  let s = digits(r, Math.max(1, n));
  if (r.chance(0.15)) {
    const at = 1 + r.int(s.length);
    s = `${s.slice(0, at)}${r.pick(["_", "_", "__"])}${s.slice(at)}`;
  }
  return s;
}

/** A string in one of the forms `BigDecimal()` reads, or one near them it refuses. */
export function bigDecimalSource(r: Rng): string {
  if (r.chance(0.04)) return r.pick(["Infinity", "+Infinity", "-Infinity", "NaN", "nan", "-NaN", "Infinityx", " NaN "]);
  const sign = r.pick(["", "", "-", "+"]);
  const int = r.chance(0.15)
    ? ""
    : r.chance(0.2)
      ? "0".repeat(1 + r.int(3)) + digitRun(r, r.int(4))
      : digitRun(r, 1 + r.int(25));
  const frac = r.chance(0.35) ? "" : r.chance(0.05) ? "." : `.${digitRun(r, 1 + r.int(20))}`;
  const exp = r.chance(0.7)
    ? ""
    : `${r.pick(["e", "E", "d", "D"])}${r.pick(["", "+", "-"])}${r.chance(0.05) ? "" : digitRun(r, 1 + r.int(3))}`;
  const pad = () => (r.chance(0.1) ? r.pick(SPACES).repeat(1 + r.int(2)) : "");
  const junk = r.chance(0.03) ? r.pick(["x", ".", "_", "e", ",5"]) : "";
  return `${pad()}${sign}${int}${frac}${exp}${junk}${pad()}`;
}

/** Nanoseconds since the epoch: near edges (whole seconds, milliseconds, year boundaries, before 1970), as text. */
function instant(r: Rng, wide: boolean): string {
  // Zoned times stop at 2025: later offsets are forecasts that tzdata releases revise
  // (Morocco's Ramadan rules), and Node's ICU and the Ruby host's tzdata are of different releases.
  const span = wide ? 253402300799 : 1735689600; // 9999-12-31 or 2025-01-01
  const sec = r.chance(0.1) ? r.pick([0, -1, 1, 946684799, 946684800, 951782400]) : r.int(span);
  const ns = r.pick([0, 999_999_999, 1, 500_000_000, r.int(1000) * 1_000_000, r.int(1_000_000_000)]);
  const s = wide && r.chance(0.3) ? -sec : sec;
  return String(BigInt(s) * 1_000_000_000n + BigInt(ns));
}

function duration(r: Rng): ValueCase {
  // Every combination of the seven parts over a run: a random non-empty subset, in random order.
  const mask = 1 + r.int(127);
  const keys = PARTS.filter((_, i) => mask & (1 << i)).sort(() => r.next() - 0.5);
  return {
    t: "dur",
    // Float parts where Ruby has them (Numeric#hours; months and years are Integer's only).
    parts: keys.map((k) => [
      k,
      r.chance(0.15)
        ? 0
        : r.chance(0.2) && k !== "months" && k !== "years"
          ? r.pick([1.5, 0.25, -2.5, 0.1])
          : r.int(200) - (r.chance(0.2) ? 100 : 0),
    ]),
  };
}

const ENDPOINTS = ["int", "float", "str", "sym", "bd", "date", "time", "datetime", "tz", "dur"] as const;

/** Two endpoints of one type, begin <= end (Ruby refuses no Range for order, but keep it natural). */
function endpoint(r: Rng, kind: (typeof ENDPOINTS)[number], zones: readonly string[]): ValueCase {
  switch (kind) {
    case "int":
      return { t: "int", v: r.int(2000) - 1000 };
    case "float":
      // Floats json < 2.10 and 2.10+ spell alike: the wire layer writes Float#to_s ("1.0e+20"), forky's json 3.1 "1e+20".
      return { t: "float", s: r.pick(["1.0", "2.5", "-0.5", "3.141592653589793", "100.0", "0.1", "-1234.5"]) };
    case "str":
      return { t: "str", v: r.pick(["a", "b", "zz", "", "é"]) };
    case "sym":
      return { t: "sym", v: r.pick(["a", "b", "zz"]) };
    case "bd":
      return { t: "bd", s: r.pick(["12.50", "1e3", "007.5", "-0.0000000010", "1", "0"]) };
    case "date":
      return { t: "date", ymd: new Date(r.int(2145916800) * 1000).toISOString().slice(0, 10) };
    case "time":
    case "datetime":
      return { t: kind, ns: instant(r, false) };
    case "tz":
      return { t: "tz", ns: instant(r, false), zone: r.pick(zones) };
    case "dur":
      return duration(r);
  }
}

function range(r: Rng, zones: readonly string[]): ValueCase {
  const kind = r.pick(ENDPOINTS);
  const open = r.int(6);
  return {
    t: "range",
    b: open === 0 ? null : endpoint(r, kind, zones),
    e: open === 1 ? null : endpoint(r, kind, zones),
    x: r.chance(0.5),
  };
}

/** Every zone name a Rails app may give: ActiveSupport's and Intl's IANA names. */
export function zoneNames(): string[] {
  return [...Object.keys(RAILS_TIME_ZONES), ...Intl.supportedValuesOf("timeZone")];
}

/**
 * `count` cases of run `seed`; the first ones name every zone once (a time in
 * each), so every run covers them all.
 */
export function valueCases(seed: number, count: number): ValueCase[] {
  const zones = zoneNames();
  const out: ValueCase[] = zones.map((zone, i) => ({
    t: "tz",
    zone,
    ns: instant(new Rng(caseSeed(seed, -1 - i)), false),
  }));
  for (let i = 0; out.length < count; i++) {
    const r = new Rng(caseSeed(seed, i));
    const k = r.int(10);
    if (k < 3) out.push({ t: "bd", s: bigDecimalSource(r) });
    else if (k < 4) out.push({ t: r.pick(["time", "datetime"] as const), ns: instant(r, true) });
    else if (k < 5) out.push({ t: "tz", ns: instant(r, false), zone: r.pick(zones) });
    else if (k < 7) out.push(duration(r));
    else out.push(range(r, zones));
  }
  return out;
}

/** The value Node's helpers write for a case (throws where they refuse). */
export function nodeValue(c: ValueCase | null): RubyJsonValue {
  if (c === null) return null;
  switch (c.t) {
    case "bd":
      return aj.bigDecimal(c.s).json;
    case "time":
      return aj.time(BigInt(c.ns)).json;
    case "datetime":
      return aj.dateTime(BigInt(c.ns)).json;
    case "tz":
      return aj.timeWithZone(BigInt(c.ns), c.zone).json;
    case "date":
      return aj.date(c.ymd).json;
    case "dur":
      return aj.duration(Object.fromEntries(c.parts)).json;
    case "range":
      return aj.range(nodeArg(c.b), nodeArg(c.e), c.x).json;
    case "int":
      return c.v;
    case "float":
      return new RubyFloat(Number(c.s));
    case "str":
      return c.v;
    case "sym":
      return aj.symbol(c.v).json;
  }
}

/** A case as an argument of `aj.range`: the helper's output, already serialized. */
const nodeArg = (c: ValueCase | null) => (c === null ? null : new AjValue(nodeValue(c)));
