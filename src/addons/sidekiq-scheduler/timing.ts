// When a schedule fires: rufus-scheduler 3.9's job kinds as sidekiq-scheduler
// uses them (`rufus_scheduler.send(interval_type, schedule, options)`), and
// the strings they read (fugit 1.13's durations, et-orbi's points in time).
//
// - cron: the next fugit fire time after the trigger (jobs_repeat.rb, CronJob#set_next_time).
// - every: a fixed cadence from the scheduler's start; triggers missed while
//   busy are skipped (EveryJob#set_next_time, `discard_past`).
// - interval: the interval counted from the end of the previous run (IntervalJob).
// - in: once, that long after the schedule is loaded (InJob).
// - at: once, at that point in time; a point already past when loaded is
//   dropped without a word (Scheduler#do_schedule with `discard_past`).
// The first_in / first_at, last_in / last_at and times options of repeating
// jobs are read as rufus reads them.
import { CronSchedule } from "../fugit/cron.js";

export type ScheduleType = "cron" | "every" | "at" | "in" | "interval";
/** The order sidekiq-scheduler tries them in: the first present wins. */
export const SCHEDULE_TYPES: readonly ScheduleType[] = ["cron", "every", "at", "in", "interval"];

/** rufus-scheduler's default `frequency`: its loop wakes every 0.3 s. */
export const RUFUS_FREQUENCY_MS = 300;

export class ScheduleSyntaxError extends Error {
  override name = "ScheduleSyntaxError";
}

const DAY_S = 86_400;
const UNIT_S: Record<string, number> = { y: 365 * DAY_S, M: 30 * DAY_S, w: 7 * DAY_S, d: DAY_S, h: 3600, m: 60, s: 1 };
// fugit's Parser: each unit in its order (year, month, week, day, hour,
// minute, second, bare seconds); only `M` (month) and `m` (minute) are case-sensitive.
const ci = (w: string) => w.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`);
const NUM = "(?:\\d+\\.\\d*|(?:\\d*\\.)?\\d+) *";
const UNITS = [
  `${ci("y")}(?:${ci("ear")}${ci("s")}?)?`,
  "(?:M|months?)",
  `${ci("w")}(?:${ci("eek")}${ci("s")}?)?`,
  `${ci("d")}(?:${ci("ay")}${ci("s")}?)?`,
  `${ci("h")}(?:${ci("our")}${ci("s")}?)?`,
  "m(?:in(?:ute)?s?)?",
  `${ci("s")}(?:${ci("ec")}(?:${ci("ond")})?)?${ci("s")}?`,
];
const PLAIN_ELT = new RegExp(`^([-+]?)((?:${UNITS.map((u) => NUM + u).join("|")})|(?:\\d+\\.\\d*|\\.\\d+|\\d+)$)`);
const ISO =
  /^([-+]?)P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)W)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?(?:\d*\.)?\d+)S)?)?$/;

function unitOf(elt: string): number {
  const u = /[a-zA-Z]+$/.exec(elt.trim())?.[0];
  if (!u) return 1;
  if (u === "M" || /^months?$/.test(u)) return UNIT_S.M!;
  if (/^[yY]/.test(u)) return UNIT_S.y!;
  if (/^m(in(ute)?s?)?$/.test(u)) return 60;
  return UNIT_S[u[0]!.toLowerCase()]!;
}

/** fugit's `Duration.parse(s).to_sec` ("1m10s", "2h", "1w2d", "30", "PT5M"); null where fugit returns nil. */
export function parseDuration(input: string | number): number | null {
  if (typeof input === "number") return Number.isFinite(input) ? input : null;
  const s = input.trim();
  if (s === "") return 0; // fugit reads an empty string as no time at all
  let rest = s;
  let total = 0;
  let sign = 1;
  let matched = false;
  while (rest.length > 0) {
    const m = PLAIN_ELT.exec(rest);
    if (!m) break;
    if (m[1] === "-") sign = -1;
    else if (m[1] === "+") sign = 1;
    total += sign * Number.parseFloat(m[2]!) * unitOf(m[2]!);
    matched = true;
    rest = rest.slice(m[0].length).replace(/^(?:[ \t,]+|and)*/i, "");
  }
  if (matched && rest === "") return total;
  const iso = ISO.exec(s.toUpperCase());
  if (!iso || s.toUpperCase() === "P" || /T$/.test(s.toUpperCase())) return null;
  const n = (i: number) => (iso[i] ? Number(iso[i]) : 0);
  const secs = n(2) * UNIT_S.y! + n(3) * UNIT_S.M! + n(4) * UNIT_S.w! + n(5) * DAY_S + n(6) * 3600 + n(7) * 60 + n(8);
  return iso[1] === "-" ? -secs : secs;
}

const POINT =
  /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T]+(\d{1,2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?\s*(Z|UTC|GMT|[+-]\d{2}:?\d{2}|[A-Za-z]+(?:\/[A-Za-z_+-]+)+)?$/;

/** A zone's offset from UTC at an instant, in minutes (Intl's "GMT-05:00"). */
function zoneOffsetMinutes(zone: string, at: number): number {
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" })
    .formatToParts(new Date(at))
    .find((p) => p.type === "timeZoneName")?.value;
  const m = name ? /^GMT(?:([+-])(\d\d):(\d\d))?$/.exec(name) : null;
  if (!m) throw new ScheduleSyntaxError(`unknown time zone ${JSON.stringify(zone)}`);
  return m[1] ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
}

/** et-orbi's `EoTime.parse` for the forms schedules use ("2026-12-01 18:00:00 +0100", "2026/12/01 18:00 Europe/Paris"); epoch ms. */
export function parsePointInTime(input: string): number {
  const m = POINT.exec(input.trim());
  if (!m) {
    const t = Date.parse(input);
    if (Number.isNaN(t)) throw new ScheduleSyntaxError(`cannot read the point in time ${JSON.stringify(input)}`);
    return t;
  }
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = m[7] ? Math.round(Number(m[7]) * 1000) : 0;
  const wall = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const zone = m[8];
  // No zone: the process's local time, as Ruby reads it.
  if (!zone) return new Date(y, mo - 1, d, h, mi, s, ms).getTime();
  if (/^(Z|UTC|GMT)$/.test(zone)) return wall;
  const off = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
  if (off) return wall - (off[1] === "-" ? -1 : 1) * (Number(off[2]) * 60 + Number(off[3])) * 60_000;
  try {
    const guess = wall - zoneOffsetMinutes(zone, wall) * 60_000;
    return wall - zoneOffsetMinutes(zone, guess) * 60_000;
  } catch {
    throw new ScheduleSyntaxError(`unknown time zone ${JSON.stringify(zone)} in ${JSON.stringify(input)}`);
  }
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, "0");

/**
 * et-orbi's `EoTime#to_s` (`%Y-%m-%d %H:%M:%S %z`), how the gem writes
 * last_times and next_times: in a zone (IANA name or minutes east of UTC), or
 * the process's local zone as Ruby's `EoTime.now` is.
 */
export function formatEoTime(ms: number, zone?: string | number): string {
  const offset =
    zone === undefined
      ? -new Date(ms).getTimezoneOffset()
      : typeof zone === "number"
        ? zone
        : zoneOffsetMinutes(zone, ms);
  const w = new Date(Math.floor(ms / 1000) * 1000 + offset * 60_000);
  const sign = offset < 0 ? "-" : "+";
  return (
    `${w.getUTCFullYear()}-${pad(w.getUTCMonth() + 1)}-${pad(w.getUTCDate())} ` +
    `${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())} ` +
    `${sign}${pad(Math.floor(Math.abs(offset) / 60))}${pad(Math.abs(offset) % 60)}`
  );
}

/** Reads a `first_at` / `last_at` value: a duration from now, now itself, or a point in time. */
function pointFrom(v: unknown, now: number, first: boolean): number {
  if (first && (v === "now" || v === "immediately" || v === 0)) return now + 3;
  const d = typeof v === "string" || typeof v === "number" ? parseDuration(v) : null;
  if (d !== null) return now + d * 1000;
  if (typeof v === "string") return parsePointInTime(v);
  throw new ScheduleSyntaxError(`cannot read ${JSON.stringify(v)} as a time`);
}

/** rufus's repeat options (`first_in`, `last_at`, `times`...), read once when the schedule is loaded. */
interface RepeatLimits {
  firstAt?: number;
  lastAt?: number;
  times?: number;
}

function repeatLimits(opts: Record<string, unknown>, now: number): RepeatLimits {
  const out: RepeatLimits = {};
  const first = opts.first ?? opts.first_time ?? opts.first_at ?? opts.first_in;
  if (first !== undefined && first !== null) {
    out.firstAt = pointFrom(first, now, true);
    if (out.firstAt < now)
      throw new ScheduleSyntaxError(`cannot set first[_at|_in] in the past: ${JSON.stringify(first)}`);
  }
  const last = opts.last ?? opts.last_at ?? opts.last_in;
  if (last !== undefined && last !== null) {
    out.lastAt = pointFrom(last, now, false);
    if (out.lastAt < now)
      throw new ScheduleSyntaxError(`cannot set last[_at|_in] in the past: ${JSON.stringify(last)}`);
  }
  if (opts.times !== undefined && opts.times !== null) {
    if (!Number.isInteger(opts.times))
      throw new ScheduleSyntaxError(`cannot accept times: ${JSON.stringify(opts.times)}`);
    out.times = opts.times as number;
  }
  return out;
}

/**
 * One loaded schedule's clock. `next` is the next trigger (epoch ms) or null
 * when it will not fire again; `trigger(now)` moves it past a trigger and says
 * which instant the gem's claim is made for.
 */
export interface Timing {
  readonly type: ScheduleType;
  next: number | null;
  /** Called when `next` is due: returns the claimed instant (epoch ms), or null when a limit ends it. */
  trigger(now: number): number | null;
  /** After the enqueue (interval counts from here). */
  done(now: number): void;
}

class CronTiming implements Timing {
  readonly type = "cron";
  next: number | null;
  constructor(
    private readonly cron: CronSchedule,
    private readonly limits: RepeatLimits,
    now: number,
  ) {
    const n = cron.nextTime(new Date(now))?.getTime() ?? null;
    this.next = limits.firstAt !== undefined && (n === null || limits.firstAt > now) ? limits.firstAt : n;
  }
  trigger(now: number): number | null {
    const due = this.next!;
    if (this.limits.times !== undefined && this.limits.times < 1) return (this.next = null);
    if (this.limits.lastAt !== undefined && now >= this.limits.lastAt) return (this.next = null);
    if (this.limits.times !== undefined) this.limits.times--;
    this.next = this.cron.nextTime(new Date(now))?.getTime() ?? null;
    // sidekiq-scheduler claims the fire time nearest the trigger (`calc_cron_run_time`): the one just due.
    return Math.floor(due / 1000) * 1000;
  }
  done(): void {}
}

class EveryTiming implements Timing {
  readonly type = "every";
  next: number | null;
  constructor(
    private readonly frequency: number,
    private readonly limits: RepeatLimits,
    now: number,
  ) {
    this.next = limits.firstAt ?? now + frequency;
  }
  trigger(now: number): number | null {
    if (this.limits.times !== undefined && this.limits.times < 1) return (this.next = null);
    if (this.limits.lastAt !== undefined && now >= this.limits.lastAt) return (this.next = null);
    if (this.limits.times !== undefined) this.limits.times--;
    let n = this.next!;
    do n += this.frequency;
    while (n <= now);
    this.next = n;
    return now;
  }
  done(): void {}
}

class IntervalTiming implements Timing {
  readonly type = "interval";
  next: number | null;
  constructor(
    private readonly interval: number,
    private readonly limits: RepeatLimits,
    now: number,
  ) {
    this.next = limits.firstAt !== undefined && limits.firstAt >= now ? limits.firstAt : now + interval;
  }
  trigger(now: number): number | null {
    if (this.limits.times !== undefined && this.limits.times < 1) return (this.next = null);
    if (this.limits.lastAt !== undefined && now >= this.limits.lastAt) return (this.next = null);
    if (this.limits.times !== undefined) this.limits.times--;
    this.next = null; // not due again until this run is done
    return now;
  }
  done(now: number): void {
    this.next = now + this.interval;
  }
}

class OnceTiming implements Timing {
  constructor(
    readonly type: "at" | "in",
    public next: number | null,
  ) {}
  trigger(now: number): number | null {
    const due = this.next!;
    this.next = null;
    // `at` is claimed for its own second (Ruby's loop triggers within 0.3 s of it); `in` for the trigger's.
    return this.type === "at" ? due : now;
  }
  done(): void {}
}

/** A schedule value as sidekiq-scheduler hands it to rufus: "1m", or ["1m", { first_in: "5s" }]. */
export function splitScheduleValue(value: unknown): { spec: unknown; opts: Record<string, unknown> } {
  if (Array.isArray(value)) {
    const [spec, opts] = value as unknown[];
    return {
      spec,
      opts: opts && typeof opts === "object" && !Array.isArray(opts) ? (opts as Record<string, unknown>) : {},
    };
  }
  return { spec: value, opts: {} };
}

/**
 * rufus runs each trigger in a work thread and lets a trigger start while the
 * last is still running, unless the schedule's options say `overlap: false`
 * (or `allow_overlap(ping): false`), as `Job#do_trigger` reads them.
 */
export function overlapAllowed(value: unknown): boolean {
  const { opts } = splitScheduleValue(value);
  return opts.overlap !== false && opts.allow_overlap !== false && opts.allow_overlapping !== false;
}

/** rufus's `max_work_threads` default: at most this many triggers run at once in one scheduler. */
export const RUFUS_MAX_WORK_THREADS = 28;

/** Builds the clock of a schedule loaded at `now`; null for an `at` already past (rufus drops it). Throws ScheduleSyntaxError. */
export function timingFor(type: ScheduleType, value: unknown, now: number): Timing | null {
  const { spec, opts } = splitScheduleValue(value);
  const duration = (what: string) => {
    const d = typeof spec === "string" || typeof spec === "number" ? parseDuration(spec) : null;
    if (d === null) throw new ScheduleSyntaxError(`cannot read ${what} ${JSON.stringify(spec)} as a duration`);
    return d * 1000;
  };
  switch (type) {
    case "cron": {
      if (typeof spec !== "string")
        throw new ScheduleSyntaxError(`a cron line must be a string, got ${JSON.stringify(spec)}`);
      let cron: CronSchedule;
      try {
        cron = new CronSchedule(spec);
      } catch (e) {
        throw new ScheduleSyntaxError(`invalid cron line ${JSON.stringify(spec)}: ${(e as Error).message}`);
      }
      return new CronTiming(cron, repeatLimits(opts, now), now);
    }
    case "every": {
      const f = duration("every");
      if (f < RUFUS_FREQUENCY_MS)
        throw new ScheduleSyntaxError(`every ${JSON.stringify(spec)}: a frequency under rufus' 0.3 s is refused`);
      return new EveryTiming(f, repeatLimits(opts, now), now);
    }
    case "interval": {
      const i = duration("interval");
      if (i <= 0) throw new ScheduleSyntaxError(`interval ${JSON.stringify(spec)} must be positive`);
      return new IntervalTiming(i, repeatLimits(opts, now), now);
    }
    case "in":
      return new OnceTiming("in", now + duration("in"));
    case "at": {
      if (typeof spec !== "string") throw new ScheduleSyntaxError(`at must be a string, got ${JSON.stringify(spec)}`);
      const t = parsePointInTime(spec);
      return t < now - RUFUS_FREQUENCY_MS ? null : new OnceTiming("at", t);
    }
  }
}
