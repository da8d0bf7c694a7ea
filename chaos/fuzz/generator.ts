// Seeded job records covering the JSON shapes Ruby's JSON writes and the
// fields Sidekiq, Rails' ActiveJob and the add-ons put in a payload: astral
// characters, NUL and escapes, integers past 2^64, 17-digit floats, `1.0`,
// exponents, deep nesting, unknown top-level keys, both timestamp units.
// Lone surrogates are not here: Ruby's JSON refuses them on every release (as
// our writer does), so they belong to the bad-input corpus.
import { JobRecord } from "../../src/core/wire/job-record.js";
import { RubyFloat, type RubyJsonValue } from "../../src/core/wire/ruby-json.js";
import { caseSeed, Rng } from "./prng.js";

/** A payload as ordered members (a JS object would move integer-like keys first). */
export type Fields = Array<[string, RubyJsonValue]>;

export interface FuzzCase {
  /** The run's seed and this case's index: `generateCase(seed, index)` gives it again. */
  seed: number;
  index: number;
  fields: Fields;
}

/** Queues the generated jobs use (a real worker listens to all of them). */
export const FUZZ_QUEUES = ["default", "fuzz", "fuzz-ü", "日本", "q:colon", "critical"] as const;

/** Plain job classes the fuzz worker defines (ruby-fixtures/fuzz/worker.rb). */
export const FUZZ_CLASSES = ["FuzzRecordJob", "Fuzz::Nested::RecordJob"] as const;
/** The ActiveJob class the fuzz worker defines. */
export const FUZZ_AJ_CLASS = "FuzzAjJob";
/** The GlobalID app whose locator the fuzz worker installs. */
export const FUZZ_GID_APP = "fuzz";

const AJ_WRAPPERS = ["ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "Sidekiq::ActiveJob::Wrapper"];

/** Pieces strings are made of: each an edge of UTF-8, JSON escaping or HTML. */
const STRING_PIECES = [
  "",
  "plain",
  " ",
  "é",
  "日本語",
  "𝄞",
  "😀",
  "👨‍👩‍👧",
  "🇫🇷",
  "e\u0301",
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u0080",
  "\u00a0",
  "\ufeff",
  "\uffff",
  "\u{10ffff}",
  "\u2028",
  "\u2029",
  "\u200f",
  '"',
  "\\",
  "/",
  "\\u0041",
  "\t",
  "\n",
  "\r",
  "\b",
  "\f",
  "</script>",
  "<b>&amp;</b>",
  "'",
  "#{x}",
  "%s",
  "null",
  "1.0",
  "gid://fuzz/FuzzModel/1",
];

function str(r: Rng, max = 4): string {
  let s = "";
  const n = r.int(max + 1);
  for (let i = 0; i < n; i++) s += r.pick(STRING_PIECES);
  return s;
}

const SPECIAL_FLOATS = [
  0,
  -0,
  1,
  -1,
  0.1,
  0.5,
  1e15,
  1e16,
  1e20,
  1e-4,
  1e-5,
  5e-324,
  Number.MAX_VALUE,
  0.1 + 0.2,
  4498948885593563.5,
  1700000000.1234567,
];

function float(r: Rng): RubyFloat {
  if (r.chance(0.4)) return new RubyFloat(r.pick(SPECIAL_FLOATS) * (r.chance(0.2) ? -1 : 1));
  // Random doubles over many magnitudes: most need 16 or 17 significant digits.
  const exp = r.int(80) - 40;
  return new RubyFloat((r.next() - 0.5) * 10 ** exp);
}

function integer(r: Rng): number | bigint {
  switch (r.int(6)) {
    case 0:
      return r.int(100) - 50;
    case 1:
      return r.pick([0, -1, 2 ** 31 - 1, -(2 ** 31), 2 ** 32, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);
    case 2:
      // Beyond 2^53: a JS number would lose it.
      return (BigInt(Number.MAX_SAFE_INTEGER) + 1n + BigInt(r.int(1000))) * (r.chance(0.5) ? 1n : -1n);
    case 3:
      // Beyond 2^64 (a Ruby Bignum).
      return 2n ** BigInt(64 + r.int(100)) + BigInt(r.int(1000)) - (r.chance(0.3) ? 2n ** 200n : 0n);
    default:
      return Math.floor((r.next() - 0.5) * 2e9);
  }
}

function key(r: Rng): string {
  if (r.chance(0.6)) return r.pick(["a", "k", "id", "name", "user_id", "x y", "1", "123", "ü", "😀", "", "_aj_x"]);
  return str(r, 3);
}

/** null, a boolean, an Integer, a Float or a String. */
function scalar(r: Rng): RubyJsonValue {
  const k = r.int(7);
  if (k === 0) return r.chance(0.5) ? null : r.chance(0.5);
  if (k < 3) return integer(r);
  if (k === 3) return float(r);
  return str(r);
}

/** A JSON value, nested at most `depth` more levels. */
export function value(r: Rng, depth: number): RubyJsonValue {
  const k = depth > 0 ? r.int(10) : 0;
  if (k < 7) return scalar(r);
  if (k === 7) return Array.from({ length: r.int(4) }, () => value(r, depth - 1));
  if (k === 8) {
    const o: { [k: string]: RubyJsonValue } = {};
    for (let i = r.int(4); i > 0; i--) o[key(r)] = value(r, depth - 1);
    return o;
  }
  return deep(r, 2 + r.int(38));
}

/** Arrays and hashes nested `levels` deep (Ruby's JSON allows 100 levels in all; a payload adds 2-4). */
function deep(r: Rng, levels: number): RubyJsonValue {
  let v: RubyJsonValue = r.chance(0.5) ? integer(r) : str(r, 2);
  for (let i = 0; i < levels; i++) v = r.chance(0.5) ? [v] : { [key(r)]: v };
  return v;
}

/** A time as a release writes it: float seconds before 8, integer milliseconds on 8. */
function timeIn(r: Rng, unit: "seconds" | "millis", base: number): RubyJsonValue {
  const ms = base + r.int(86_400_000);
  if (unit === "millis") return ms;
  // Ruby's Time.now.to_f: microseconds, some printed with fewer digits.
  return new RubyFloat((ms * 1000 + r.int(1000)) / 1e6);
}

/** An ActiveJob argument as ActiveJob::Arguments.serialize writes it. */
function ajArgument(r: Rng, depth: number): RubyJsonValue {
  const k = r.int(depth > 0 ? 10 : 7);
  if (k === 0) return { _aj_globalid: `gid://${FUZZ_GID_APP}/FuzzModel/${r.pick(["1", "42", "abc", "%C3%BC"])}` };
  if (k === 1)
    return { _aj_serialized: "ActiveJob::Serializers::SymbolSerializer", value: r.pick(["sym", "a_b", "ü"]) };
  if (k === 2)
    return {
      _aj_serialized: "ActiveJob::Serializers::TimeSerializer",
      value: new Date(1_700_000_000_000 + r.int(1e9)).toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z"),
    };
  if (k < 7) return scalar(r);
  if (k === 7) return Array.from({ length: r.int(3) }, () => ajArgument(r, depth - 1));
  // A Hash: ActiveJob lists its Symbol keys (none for String keys).
  const o: { [k: string]: RubyJsonValue } = {};
  const keys: string[] = [];
  for (let i = r.int(3); i > 0; i--) {
    const name = r.pick(["a", "b", "name", "ü", "x y"]);
    o[name] = ajArgument(r, depth - 1);
    if (!keys.includes(name)) keys.push(name);
  }
  o._aj_symbol_keys = r.chance(0.5) ? keys : [];
  return o;
}

function activeJobArgs(r: Rng, queue: string, rails71: boolean): RubyJsonValue[] {
  const args = Array.from({ length: r.int(4) }, () => ajArgument(r, 2));
  if (r.chance(0.4)) {
    const kw: { [k: string]: RubyJsonValue } = {};
    for (const k of ["id", "when", "big"].slice(0, 1 + r.int(3))) kw[k] = ajArgument(r, 1);
    kw._aj_ruby2_keywords = Object.keys(kw);
    args.push(kw);
  }
  const enqueued = new Date(1_700_000_000_000 + r.int(1e9));
  const job: { [k: string]: RubyJsonValue } = {
    job_class: FUZZ_AJ_CLASS,
    job_id: `${r.hex(8)}-${r.hex(4)}-4${r.hex(3)}-a${r.hex(3)}-${r.hex(12)}`,
    provider_job_id: null,
    queue_name: queue,
    priority: r.chance(0.2) ? r.int(10) : null,
    arguments: args,
    executions: 0,
    exception_executions: {},
    locale: "en",
    timezone: r.pick(["UTC", "Europe/Paris", null]),
    enqueued_at: rails71
      ? enqueued.toISOString().replace(/\.(\d{3})Z$/, ".$1000000Z")
      : enqueued.toISOString().slice(0, 19) + "Z",
  };
  if (rails71) job.scheduled_at = r.chance(0.5) ? null : job.enqueued_at!;
  return [job];
}

/** The add-ons' payload fields: sidekiq-unique-jobs, a Pro batch, tracing, sidekiq-scheduler, sidekiq-cron. */
function addonFields(r: Rng, fields: Fields): void {
  if (r.chance(0.15)) {
    fields.push(["lock", r.pick(["until_executed", "while_executing", "until_and_while_executing", "until_expired"])]);
    fields.push(["lock_digest", `uniquejobs:${r.hex(32)}`]);
    if (r.chance(0.5)) fields.push(["lock_args", [integer(r), str(r, 2)]]);
    if (r.chance(0.5)) fields.push(["lock_ttl", r.chance(0.5) ? null : r.int(3600)]);
    if (r.chance(0.3)) fields.push(["lock_timeout", 0]);
    if (r.chance(0.3)) fields.push(["lock_prefix", "uniquejobs"]);
    if (r.chance(0.3)) fields.push(["on_conflict", r.pick(["log", "reject", "replace"])]);
  }
  if (r.chance(0.08)) fields.push(["bid", r.hex(16)]);
  if (r.chance(0.08)) fields.push(["traceparent", `00-${r.hex(32)}-${r.hex(16)}-01`]);
  if (r.chance(0.05)) fields.push(["rails_env", "production"]);
  if (r.chance(0.05)) fields.push(["cron_job", r.pick(["nightly", "every minute"])]);
  if (r.chance(0.05)) fields.push(["throttled", true]);
  if (r.chance(0.05)) fields.push(["tags", [str(r, 2), "t"]]);
}

/** Release whose timestamps a case carries: 6.x and 7.x float seconds, 8.x integer ms. */
export type TimeDialect = 6 | 7 | 8;

/**
 * Job record `index` of a run seeded `seed`: the shape Ruby's Sidekiq (or
 * Rails' adapter, or an add-on) writes, with random arguments and unknown
 * keys. Reproducible from (seed, index) alone. `release` (the major of the
 * fleet that runs the job) names the ActiveJob wrapper class: a release
 * performs only its own adapter's wrapper; by default the one of the case's
 * timestamp dialect.
 */
export function generateCase(seed: number, index: number, release?: 6 | 7 | 8): FuzzCase {
  const r = new Rng(caseSeed(seed, index));
  const dialect = r.pick([6, 7, 8] as const);
  const unit = dialect === 8 ? "millis" : "seconds";
  const base = 1_600_000_000_000 + r.int(200_000_000) * 1000;
  const queue = r.pick(FUZZ_QUEUES);
  // Unique per run: the oracle finds a case's job by its jid.
  const jid = index.toString(16).padStart(8, "0") + r.hex(16);
  const fields: Fields = [];
  const retry: RubyJsonValue = r.pick([true, true, true, false, 0, 1, 3, 25]);
  const activeJob = r.chance(0.2);
  if (activeJob) {
    const rails71 = dialect !== 6;
    // Rails' adapter pushes through Client.push, whose normalize_item puts the defaults (retry, queue) first.
    fields.push(["retry", retry]);
    fields.push(["queue", queue]);
    fields.push(["class", (release ?? dialect) === 8 ? AJ_WRAPPERS[1]! : AJ_WRAPPERS[0]!]);
    fields.push(["wrapped", FUZZ_AJ_CLASS]);
    fields.push(["args", activeJobArgs(r, queue, rails71)]);
  } else {
    fields.push(["retry", retry]);
    fields.push(["queue", queue]);
    fields.push(["class", r.pick(FUZZ_CLASSES)]);
    const args = Array.from({ length: r.int(5) }, () => value(r, 3));
    // sidekiq-cron's GlobalID marker in an argument.
    if (r.chance(0.05)) args.push({ _sc_globalid: `gid://${FUZZ_GID_APP}/FuzzModel/7` });
    fields.push(["args", args]);
  }
  if (r.chance(0.15)) fields.push(["backtrace", r.pick([true, false, 3, 0, -2] as RubyJsonValue[])]);
  if (r.chance(0.1)) fields.push(["retry_queue", r.pick(FUZZ_QUEUES)]);
  if (r.chance(0.05)) fields.push(["dead", false]);
  // Ruby's client refuses a retry_for above 1e9 (an absolute time by mistake), so Ruby never writes one.
  if (r.chance(0.05) && dialect !== 6) fields.push(["retry_for", r.pick([0, 3600, 1_000_000_000])]);
  addonFields(r, fields);
  fields.push(["jid", jid]);
  if (!r.chance(0.1)) fields.push(["created_at", timeIn(r, unit, base)]);
  if (!r.chance(0.1)) fields.push(["enqueued_at", timeIn(r, unit, base + 1000)]);
  if (r.chance(0.3)) {
    // A job that failed before.
    fields.push(["error_message", str(r, 3)]);
    fields.push(["error_class", r.pick(["RuntimeError", "ArgumentError", "Fuzz::Error"])]);
    fields.push(["failed_at", timeIn(r, unit, base + 2000)]);
    fields.push(["retry_count", r.int(30)]);
    if (r.chance(0.5)) fields.push(["retried_at", timeIn(r, unit, base + 3000)]);
  }
  // Unknown top-level keys, anywhere Ruby's Hash order puts them (appended last).
  for (let i = r.chance(0.5) ? 1 + r.int(3) : 0; i > 0; i--) {
    const k = r.chance(0.5) ? `x_${str(r, 2)}` : r.pick(["_meta", "tenant", "x-request-id", "ü", "😀", "\u2028k"]);
    if (!fields.some(([f]) => f === k)) fields.push([k, value(r, 4)]);
  }
  return { seed, index, fields };
}

/** The case's payload as Ruby's JSON.generate writes it (compact, raw UTF-8), members in order. */
export function caseText(c: Pick<FuzzCase, "fields">): string {
  return JobRecord.fromEntries(c.fields).toString();
}

/** A field of the case, or undefined. */
export function field(c: Pick<FuzzCase, "fields">, name: string): RubyJsonValue | undefined {
  return c.fields.find(([k]) => k === name)?.[1];
}
