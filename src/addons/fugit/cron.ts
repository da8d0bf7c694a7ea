// Cron expressions as sidekiq-cron reads them (fugit 1.13's syntax and
// semantics), computed with croner.
//
// fugit reads more than classic cron: wrap-around ranges (`50-10`, `fri-mon`),
// steps larger than the field (`*/90`), `N/S`, hour 24, negative month days
// (`-1` is the last day, `L`/`last` too), `#-1`/`#L` (last weekday of the
// month), weekday modulo (`mon%2`, `tue%3+1`), `&` (day of month AND day of
// week), seconds as a sixth leading field and a trailing time zone name or UTC
// offset. croner reads a narrower syntax, so each field is expanded here the
// way fugit expands it (`range` and `determine_weekdays` in fugit/cron.rb) into
// explicit lists; croner then walks seconds, minutes, hours and months in the
// zone, and the day of month / day of week rule is fugit's own (`day_match?`),
// applied here as a filter. fugit matches wall-clock times: a time that a DST
// change skips never fires and a time it repeats fires twice; croner instead
// moves a "fixed time" job (`30 2 * * *`) out of the gap and runs it once in
// the overlap, so every pattern is run as croner's interval kind.
//
// Not read (fugit reads them, the Node poller logs and skips the job): `~`
// (fugit picks a random value at each parse) and fugit's natural language
// ("every day at noon"), which sidekiq-cron also accepts.
import { Cron } from "croner";
import { zoneFormat } from "../../core/wire/rails-time-zones.js";

/** A cron expression fugit would refuse. */
export class CronSyntaxError extends Error {
  override name = "CronSyntaxError";
}

type Weekday = { wd: number; hash?: number; mod?: [number, number] };

/** A parsed cron expression: fugit's fields and zone. */
export interface CronFields {
  seconds: number[];
  minutes: number[] | null;
  hours: number[] | null;
  monthdays: number[] | null;
  months: number[] | null;
  weekdays: Weekday[] | null;
  dayAnd: boolean;
  /** IANA zone name, or a fixed offset in minutes east of UTC. */
  zone?: string | number;
}

const SPECIALS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@noon": "0 12 * * *",
  "@hourly": "0 * * * *",
};
const MAXDAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const MONTHS = ["-", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

// One list element per field kind, as fugit's Raabro grammar reads it.
const MOS = "[0-5]?\\d";
const HOU = "(?:2[0-4]|[01]?[0-9])";
const DOM = "(?:-?(?:3[01]|[12][0-9]|0?[1-9])|last|l)";
const MON = `(?:1[0-2]|0?[1-9]|${MONTHS.slice(1).join("|")})`;
const DOW = `(?:[0-7]|${WEEKDS.join("|")})`;

interface Element {
  a?: string;
  z?: string;
  tilde: boolean;
  slash?: number;
}

function elementRegex(v: string): RegExp {
  // `/S` alone, `*` or a range (`a`, `a-z`) or a tilde range, then an optional `/S`.
  return new RegExp(`^(?:/(\\d\\d?)|(?:(\\*)|(${v})?(~)(${v})?|(${v})(?:-(${v}))?)(?:/(\\d\\d?))?)$`, "i");
}
const REX = { mos: elementRegex(MOS), hou: elementRegex(HOU), dom: elementRegex(DOM), mon: elementRegex(MON) };

function parseElement(kind: keyof typeof REX, s: string): Element | undefined {
  const m = REX[kind].exec(s);
  if (!m) return undefined;
  if (m[1] !== undefined) return { tilde: false, slash: Number(m[1]) };
  const slash = m[8] !== undefined ? Number(m[8]) : undefined;
  if (m[2]) return { tilde: false, ...(slash !== undefined ? { slash } : {}) };
  if (m[4]) return { a: m[3], z: m[5], tilde: true, ...(slash !== undefined ? { slash } : {}) };
  return { a: m[6], z: m[7], tilde: false, ...(slash !== undefined ? { slash } : {}) };
}

function bound(kind: "mos" | "hou" | "dom" | "mon" | "dow", s: string): number {
  const l = s.toLowerCase();
  if (kind === "mon" && MONTHS.includes(l)) return MONTHS.indexOf(l);
  if (kind === "dow" && WEEKDS.includes(l)) return WEEKDS.indexOf(l);
  if (kind === "dom" && l.startsWith("l")) return -1;
  return Number.parseInt(l, 10);
}

/** fugit's `range`: a..z wrapping past max, every `sla`-th value; null for the whole field. */
function range(min: number, max: number, sta: number, edn: number, sla: number): number[] | null {
  if (sta === min && edn === max && sla === 1) return null;
  if ((sta < 0 && edn > 0) || (edn < 0 && sta > 0))
    throw new CronSyntaxError("both start and end of a range must be negative");
  const omax = max;
  if (sta < 0) [min, max] = [-max, -1];
  const out: number[] = [];
  let cur = sta;
  for (;;) {
    out.push(cur);
    if (cur === edn) break;
    cur += 1;
    if (cur > max) {
      cur = min;
      if (edn > max) edn = edn - max - 1;
    }
    if (out.length > 2 * omax) throw new CronSyntaxError("a range that never ends");
  }
  return [...new Set(out.filter((_, i) => i % sla === 0))];
}

/** fugit's `do_determine` for one field's list: sorted values, null for "every". */
function determine(kind: "mos" | "hou" | "dom" | "mon", list: string, min: number, max: number): number[] | null {
  let any = false;
  const values: number[] = [];
  for (const raw of list.split(",")) {
    if (raw === "") continue; // fugit allows stray commas
    const el = parseElement(kind, raw);
    if (!el) throw new CronSyntaxError(`cannot read "${raw}"`);
    if (el.tilde) throw new CronSyntaxError(`"~" (a random value fugit picks at each parse) is not supported`);
    if (el.slash !== undefined && el.slash < 1) throw new CronSyntaxError(`a step of 0 in "${raw}"`);
    let sta = el.a !== undefined ? bound(kind, el.a) : undefined;
    let edn = el.z !== undefined ? bound(kind, el.z) : undefined;
    const sla = el.slash;
    if (sla !== undefined && edn === undefined) edn = max;
    let r: number[] | null;
    if (sta !== undefined && edn === undefined) r = [sta];
    else {
      sta ??= min;
      if (edn === undefined || (edn < 0 && sta > 0)) edn = max;
      r = range(min, max, sta, edn, sla ?? 1);
    }
    if (r === null) any = true;
    else for (const v of r) values.push(kind === "hou" && v === 24 ? 0 : v);
  }
  if (any) return null;
  if (values.length === 0) throw new CronSyntaxError(`an empty field "${list}"`);
  return [...new Set(values)].sort((x, y) => x - y);
}

const DOW_ELT = new RegExp(
  `^(?:(${DOW})#(-?[1-5]|last|l)|(${DOW})%(\\d+)(?:\\+(\\d+))?|/(\\d\\d?)|(?:(\\*)|(${DOW})?(~)(${DOW})?|(${DOW})(?:-(${DOW}))?)(?:/(\\d\\d?))?)$`,
  "i",
);

/** fugit's `determine_weekdays`: [weekday, `#` or `%`] pairs, null for "every day". */
function determineWeekdays(list: string): Weekday[] | null {
  const out = new Map<string, Weekday>();
  const add = (w: Weekday) => {
    if (w.wd === 7) w.wd = 0;
    out.set(JSON.stringify(w), w);
  };
  for (const raw of list.split(",")) {
    if (raw === "") continue;
    const m = DOW_ELT.exec(raw);
    if (!m) throw new CronSyntaxError(`cannot read day of week "${raw}"`);
    if (m[1] !== undefined) {
      const h = m[2]!.toLowerCase().startsWith("l") ? -1 : Number(m[2]);
      add({ wd: bound("dow", m[1]), hash: h });
      continue;
    }
    if (m[3] !== undefined) {
      add({ wd: bound("dow", m[3]), mod: [Number(m[4]), m[5] !== undefined ? Number(m[5]) : 0] });
      continue;
    }
    if (m[9]) throw new CronSyntaxError(`"~" (a random value fugit picks at each parse) is not supported`);
    const sl = m[6] !== undefined ? Number(m[6]) : m[13] !== undefined ? Number(m[13]) : undefined;
    let a = m[11] !== undefined ? bound("dow", m[11]) : undefined;
    let z = m[12] !== undefined ? bound("dow", m[12]) : undefined;
    if (sl !== undefined) {
      z ??= a ?? 6;
      a ??= 0;
      if (a > z) z += 7;
      for (let i = a; i <= z; i += Math.max(1, sl)) add({ wd: i > 6 ? i - 7 : i });
    } else if (z !== undefined && a !== undefined) {
      if (a > z) z += 7;
      for (let i = a; i <= z; i++) add({ wd: i > 6 ? i - 7 : i });
    } else if (a !== undefined) add({ wd: a });
  }
  const wds = [...out.values()];
  return wds.length === 0 ? null : wds;
}

const TZ_NAME = /^[A-Z][a-zA-Z0-9+-]+(?:\/[A-Z][a-zA-Z0-9+\-_]+){0,2}$/;
const TZ_DELTA = /^([-+])([01][0-9]|2[0-4]):?(00|15|30|45)$/;

function zoneOf(s: string): string | number | undefined {
  const d = TZ_DELTA.exec(s);
  if (d) return (d[1] === "-" ? -1 : 1) * (Number(d[2]) * 60 + Number(d[3]));
  if (!TZ_NAME.test(s)) return undefined;
  return zoneFormat(s) ? s : undefined;
}

function fieldsFrom(tokens: string[], seconds: boolean, zone: string | number | undefined): CronFields {
  const [sec, min, hou, dom, mon, dow] = seconds ? tokens : ["0", ...tokens];
  const dayAnd = /&$/.test(dom!) || /&$/.test(dow!);
  const f: CronFields = {
    seconds: determine("mos", sec!, 0, 59) ?? Array.from({ length: 60 }, (_, i) => i),
    minutes: determine("mos", min!, 0, 59),
    hours: determine("hou", hou!, 0, 23),
    monthdays: determine("dom", dom!.replace(/&$/, ""), 1, 31),
    months: determine("mon", mon!, 1, 12),
    weekdays: determineWeekdays(dow!.replace(/&$/, "")),
    dayAnd,
    ...(zone !== undefined ? { zone } : {}),
  };
  // fugit's compact_month_days: months without any of the days go, and nothing left is invalid.
  if (f.months && f.monthdays) {
    const ms = new Set<number>();
    const ds = new Set<number>();
    for (const m of f.months)
      for (const d of f.monthdays)
        if (d <= MAXDAYS[m]!) {
          ms.add(m);
          ds.add(d);
        }
    if (ms.size === 0) throw new CronSyntaxError("no month has these days (Feb 30th like?)");
    f.months = [...ms];
    f.monthdays = [...ds];
  }
  return f;
}

/** Reads a cron string as `Fugit.parse_cron` does; throws CronSyntaxError where fugit returns nil. */
export function parseCronFields(input: string): CronFields {
  let s = input.trim();
  if (s.startsWith("@")) {
    const [head, ...rest] = s.split(/\s+/);
    const special = SPECIALS[head!];
    if (!special) throw new CronSyntaxError(`unknown macro ${head}`);
    s = [special, ...rest].join(" ");
  }
  // fugit's list separator is `,([ \t]*,)*`: commas with blanks between them are one.
  const tokens = s.replace(/,([ \t]*,)+/g, ",").split(/[ \t]+/);
  const attempts: Array<[boolean, string[], string | undefined]> = [];
  if (tokens.length === 6) attempts.push([true, tokens, undefined], [false, tokens.slice(0, 5), tokens[5]]);
  else if (tokens.length === 7) attempts.push([true, tokens.slice(0, 6), tokens[6]]);
  else if (tokens.length === 5) attempts.push([false, tokens, undefined]);
  else if (/^[a-z]/i.test(s))
    throw new CronSyntaxError(
      "not a cron expression (fugit's natural language, such as 'every day at noon', is read by Ruby only)",
    );
  else throw new CronSyntaxError(`expected 5 or 6 fields and an optional time zone, got ${tokens.length} parts`);
  let last: unknown;
  for (const [seconds, fields, tz] of attempts) {
    try {
      const zone = tz === undefined ? undefined : zoneOf(tz);
      if (tz !== undefined && zone === undefined) throw new CronSyntaxError(`unknown time zone "${tz}"`);
      return fieldsFrom(fields, seconds, zone);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

interface LocalDay {
  y: number;
  m: number;
  d: number;
  wday: number;
  secOfDay: number;
}

/** Wall-clock date and weekday of an instant in a zone. */
function localDay(t: Date, zone: string | number | undefined, fmt: Intl.DateTimeFormat | undefined): LocalDay {
  if (fmt) {
    const p: Record<string, number> = {};
    for (const x of fmt.formatToParts(t)) if (x.type !== "literal") p[x.type] = Number(x.value);
    const hour = p.hour === 24 ? 0 : p.hour!;
    const wday = new Date(Date.UTC(p.year!, p.month! - 1, p.day!)).getUTCDay();
    return { y: p.year!, m: p.month!, d: p.day!, wday, secOfDay: hour * 3600 + p.minute! * 60 + p.second! };
  }
  const u = new Date(t.getTime() + (typeof zone === "number" ? zone : 0) * 60_000);
  return {
    y: u.getUTCFullYear(),
    m: u.getUTCMonth() + 1,
    d: u.getUTCDate(),
    wday: u.getUTCDay(),
    secOfDay: u.getUTCHours() * 3600 + u.getUTCMinutes() * 60 + u.getUTCSeconds(),
  };
}

const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();
const RWEEK_REF = Date.UTC(2018, 11, 31); // et-orbi's reference Monday for `%`

/** fugit's `day_match?` on a wall-clock day. */
export function dayMatches(f: CronFields, day: LocalDay): boolean {
  const weekday = () =>
    f.weekdays === null ||
    f.weekdays.some((w) => {
      if (w.wd !== day.wday) return false;
      if (w.mod) {
        const rweek = Math.floor(Math.floor((Date.UTC(day.y, day.m - 1, day.d) - RWEEK_REF) / 86_400_000) / 7);
        const [mod, plus] = w.mod;
        return ((rweek % mod) + mod) % mod === plus % mod;
      }
      if (w.hash !== undefined) {
        const fromStart = Math.floor((day.d - 1) / 7) + 1;
        const fromEnd = -(Math.floor((daysIn(day.y, day.m) - day.d) / 7) + 1);
        return w.hash === fromStart || w.hash === fromEnd;
      }
      return true;
    });
  const monthday = () => {
    if (f.monthdays === null) return true;
    const last = daysIn(day.y, day.m) + 1;
    return f.monthdays.some((d) => (d < 1 ? last + d : d) === day.d);
  };
  if (f.weekdays && f.monthdays) return f.dayAnd ? weekday() && monthday() : weekday() || monthday();
  return weekday() && monthday();
}

const list = (v: number[] | null) => (v === null ? "*" : v.join(","));
const MAX_DAYS_SKIPPED = 5000;

/** A cron schedule: the fire times around an instant, as fugit computes them. */
export class CronSchedule {
  readonly fields: CronFields;
  private readonly cron: Cron;
  private readonly fmt: Intl.DateTimeFormat | undefined;

  constructor(readonly expression: string) {
    this.fields = parseCronFields(expression);
    const f = this.fields;
    const zone = f.zone;
    const pattern = `${list(f.seconds)} ${list(f.minutes)} ${list(f.hours)} * ${list(f.months)} *`;
    this.cron = new Cron(pattern, {
      paused: true,
      ...(typeof zone === "number" ? { utcOffset: zone } : { timezone: zone ?? "UTC" }),
    });
    // Wall-clock matching like fugit (skip DST gaps, fire twice in overlaps):
    // croner's interval behaviour, which it picks from a flag on its pattern.
    const state = (this.cron as unknown as { _states?: { pattern?: { isFixedTime?: boolean } } })._states;
    if (state?.pattern?.isFixedTime === undefined) {
      throw new Error("croner changed: cannot select its wall-clock (interval) DST behaviour");
    }
    state.pattern.isFixedTime = false;
    // The same formatter as Rails' zones (its extra era field is ignored by localDay).
    this.fmt = typeof zone === "number" ? undefined : zoneFormat(zone ?? "UTC");
  }

  /** fugit's `next_time`: the first fire time strictly after `from` (whole seconds). */
  nextTime(from: Date): Date | null {
    let cursor = from;
    for (let i = 0; i < MAX_DAYS_SKIPPED; i++) {
      const t = this.cron.nextRun(cursor);
      if (!t) return null;
      const day = localDay(t, this.fields.zone, this.fmt);
      if (dayMatches(this.fields, day)) return t;
      // Past the rest of that wall-clock day (an hour short, for 23-hour days).
      cursor = new Date(t.getTime() + Math.max(1, 86_400 - day.secOfDay - 3601) * 1000);
    }
    throw new CronSyntaxError(`no fire time found for ${JSON.stringify(this.expression)} (Feb 30th like?)`);
  }

  /** fugit's `previous_time`: the last fire time at least one second before `from`. */
  previousTime(from: Date): Date | null {
    // croner counts a run earlier in the reference's own second: start half a second into the previous one.
    let ref = new Date((Math.floor(from.getTime() / 1000) - 1) * 1000 + 500);
    for (let i = 0; i < MAX_DAYS_SKIPPED; i++) {
      const t = this.cron.previousRuns(1, ref)[0];
      if (!t) return null;
      const day = localDay(t, this.fields.zone, this.fmt);
      if (dayMatches(this.fields, day)) return t;
      ref = new Date(t.getTime() - Math.max(1, day.secOfDay - 3600) * 1000);
    }
    throw new CronSyntaxError(`no fire time found for ${JSON.stringify(this.expression)} (Feb 30th like?)`);
  }
}

/** Parses a cron string for sidekiq-cron's poller; throws CronSyntaxError with fugit-like reasons. */
export function parseCron(expression: string): CronSchedule {
  return new CronSchedule(expression);
}
