// What `throttled: {...}` on a worker takes, read the way `sidekiq_throttle`
// reads its Ruby options (job.rb, strategy.rb, strategy/*.rb, config.rb), and
// resolved once into frozen strategies. Ruby's procs are functions here,
// called with the job's arguments (Ruby: `proc.call(*job_args)`).
import type { JsonValue } from "../../core/wire/json-scan.js";

/** A value fixed in the options, or computed from the job's arguments (a Ruby proc). */
export type Dynamic<T> = T | ((...args: JsonValue[]) => T);

/** strategy/concurrency.rb's keyword arguments. */
export interface ConcurrencyOptions {
  /** Jobs that may run at once; a function may return null (not throttled) or 0 (always throttled). */
  limit: Dynamic<number | null>;
  /** Seconds after which a slot counts as lost (the gem's default 900, or 3 × avgJobDuration). */
  lostJobThreshold?: number;
  /** 1.5's name for lostJobThreshold (2.1 keeps it as an alias). */
  ttl?: number;
  /** 2.1: seconds a job takes on average (default 300, or lostJobThreshold / 3); sets the `:schedule` delay. */
  avgJobDuration?: number;
  /** 2.1: the longest `:schedule` delay (default min(10 × avgJobDuration, 1800)). */
  maxDelay?: number;
}

/** strategy/threshold.rb's keyword arguments. */
export interface ThresholdOptions {
  /** Jobs that may start within a period; null: not throttled; 0: always throttled. */
  limit: Dynamic<number | null>;
  /** Seconds. */
  period: Dynamic<number>;
}

/** What to do with a throttled job (strategy.rb `requeue:`, config.rb `default_requeue_options`). */
export interface RequeueOptions {
  /** "enqueue" (default): back to its queue's far end; "schedule": into the schedule set, for when a slot is expected. */
  with?: Dynamic<"enqueue" | "schedule">;
  /** Another queue to send it to (default: the queue it came from). */
  to?: Dynamic<string | null>;
}

/** One class's `sidekiq_throttle(...)`. */
export interface ThrottleOptions {
  concurrency?: ConcurrencyOptions | readonly ConcurrencyOptions[];
  threshold?: ThresholdOptions | readonly ThresholdOptions[];
  /** Adds `:<suffix>` to the keys (one counter per suffix), e.g. `(userId) => userId`. */
  keySuffix?: Dynamic<string>;
  requeue?: RequeueOptions;
  /** Called when a job is throttled, with "concurrency" or "threshold" and the job's arguments. */
  observer?: (kind: "concurrency" | "threshold", ...args: JsonValue[]) => void;
}

/** The add-on's option. */
export interface ThrottledOptions {
  /** Throttles by class name; a string names a shared throttle of `shared` (`sidekiq_throttle_as`). */
  classes?: Readonly<Record<string, ThrottleOptions | string>>;
  /** Throttles several classes share, by name (`Sidekiq::Throttled::Registry.add(:name, ...)`). */
  shared?: Readonly<Record<string, ThrottleOptions>>;
  /**
   * Which gem line the Ruby fleet runs, for its concurrency script: 1 (1.5.x
   * and 2.0.x, no backlog hash) or 2 (2.1.x). Default: 2 on a Sidekiq 8
   * fleet (2.x needs it), else 1.
   */
  gem?: 1 | 2;
  /** Seconds a queue is skipped after `cooldownThreshold` throttled jobs in a row (config.rb: 1.0); null: never. */
  cooldownPeriod?: number | null;
  /** Throttled jobs in a row that start a cooldown (config.rb: 100). */
  cooldownThreshold?: number;
  /** The requeue of throttles that give none (config.rb `default_requeue_options`: enqueue). */
  defaultRequeue?: RequeueOptions;
}

/** A wrong option, named as the gem names its ArgumentError. */
export class ThrottledOptionError extends Error {
  override name = "ArgumentError";
}

export interface ResolvedConcurrency {
  limit: Dynamic<number | null>;
  lostJobThreshold: number;
  /** 1.5.2's key had no such parameter; 2.1's delay estimate uses it. */
  avgJobDuration: number;
  maxDelay: number;
}

export interface ResolvedStrategy {
  /** The name its keys carry: the class, or the shared throttle's name. */
  name: string;
  concurrency: readonly ResolvedConcurrency[];
  threshold: readonly ThresholdOptions[];
  keySuffix: Dynamic<string> | undefined;
  requeue: { with: Dynamic<"enqueue" | "schedule">; to: Dynamic<string | null> | undefined };
  observer: ThrottleOptions["observer"];
}

export interface ResolvedThrottled {
  /** Strategies by class name (shared ones appear under each class that uses them). */
  byClass: ReadonlyMap<string, ResolvedStrategy>;
  gem: 1 | 2 | undefined;
  cooldownPeriod: number | null;
  cooldownThreshold: number;
}

const positive = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n > 0;

function list<T>(v: T | readonly T[] | undefined): readonly T[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? (v as readonly T[]) : [v as T];
}

function checkLimit(where: string, limit: unknown): void {
  if (typeof limit === "function" || limit === null) return;
  if (typeof limit !== "number" || !Number.isFinite(limit))
    throw new ThrottledOptionError(`${where}: limit must be a number or a function of the job's arguments`);
}

/** strategy/concurrency.rb#interp_duration_args and its checks (2.1; 1.5 reads only `ttl`). */
function concurrency(where: string, c: ConcurrencyOptions): ResolvedConcurrency {
  checkLimit(where, c.limit);
  const lost = c.lostJobThreshold ?? c.ttl;
  for (const [k, v] of [
    ["lostJobThreshold", lost],
    ["avgJobDuration", c.avgJobDuration],
    ["maxDelay", c.maxDelay],
  ] as const)
    if (v !== undefined && !positive(v)) throw new ThrottledOptionError(`${where}: ${k} must be a positive number`);
  // Ruby's to_i: whole seconds.
  const avg = c.avgJobDuration !== undefined ? Math.trunc(c.avgJobDuration) : undefined;
  const lostS = lost !== undefined ? Math.trunc(lost) : undefined;
  const [avgJobDuration, lostJobThreshold] =
    avg !== undefined && lostS !== undefined
      ? [avg, lostS]
      : avg !== undefined
        ? [avg, avg * 3]
        : lostS !== undefined
          ? [Math.trunc(lostS / 3), lostS]
          : [300, 900];
  if (lostJobThreshold <= avgJobDuration)
    throw new ThrottledOptionError(`${where}: lost_job_threshold must be greater than avg_job_duration`);
  return {
    limit: c.limit,
    lostJobThreshold,
    avgJobDuration,
    maxDelay: c.maxDelay ?? Math.min(10 * avgJobDuration, 1800),
  };
}

function threshold(where: string, t: ThresholdOptions): ThresholdOptions {
  checkLimit(where, t.limit);
  if (typeof t.period !== "function" && !positive(t.period))
    throw new ThrottledOptionError(`${where}: period must be a positive number of seconds or a function`);
  return t;
}

function requeueWith(where: string, r: RequeueOptions | undefined, dflt: RequeueOptions["with"]) {
  const w = r?.with ?? dflt ?? "enqueue";
  if (typeof w !== "function" && w !== "enqueue" && w !== "schedule")
    throw new ThrottledOptionError(`${where}: requeue: ${String(w)} is not a valid value for :with`);
  return w;
}

function strategy(name: string, o: ThrottleOptions, dflt: RequeueOptions): ResolvedStrategy {
  const where = `throttle ${name}`;
  if (!o || typeof o !== "object") throw new ThrottledOptionError(`${where}: expected an object of options`);
  const conc = list(o.concurrency).map((c) => concurrency(`${where} concurrency`, c));
  const thr = list(o.threshold).map((t) => threshold(`${where} threshold`, t));
  if (conc.length === 0 && thr.length === 0)
    throw new ThrottledOptionError(`${where}: Neither :concurrency nor :threshold given`);
  const to = o.requeue?.to ?? dflt.to;
  return Object.freeze({
    name,
    concurrency: conc,
    threshold: thr,
    keySuffix: o.keySuffix,
    requeue: Object.freeze({ with: requeueWith(where, o.requeue, dflt.with), to }),
    observer: o.observer,
  });
}

/** Reads the option once; throws ThrottledOptionError on what the gem would refuse at `sidekiq_throttle`. */
export function resolveThrottled(o: ThrottledOptions | true): ResolvedThrottled {
  const opts: ThrottledOptions = o === true ? {} : o;
  const dflt = opts.defaultRequeue ?? {};
  requeueWith("defaultRequeue", dflt, undefined);
  const cooldownPeriod = opts.cooldownPeriod === undefined ? 1.0 : opts.cooldownPeriod;
  if (cooldownPeriod !== null && !positive(cooldownPeriod))
    throw new ThrottledOptionError("cooldownPeriod must be a positive number of seconds or null");
  const cooldownThreshold = opts.cooldownThreshold ?? 100;
  if (!Number.isInteger(cooldownThreshold) || cooldownThreshold <= 0)
    throw new ThrottledOptionError("cooldownThreshold must be a positive whole number");
  if (opts.gem !== undefined && opts.gem !== 1 && opts.gem !== 2)
    throw new ThrottledOptionError(`gem must be 1 or 2, got ${String(opts.gem)}`);
  const shared = new Map(Object.entries(opts.shared ?? {}).map(([n, s]) => [n, strategy(n, s, dflt)]));
  const byClass = new Map<string, ResolvedStrategy>();
  for (const [cls, spec] of Object.entries(opts.classes ?? {})) {
    if (typeof spec === "string") {
      const s = shared.get(spec);
      // registry.rb#add_alias: "Strategy not found".
      if (!s) throw new ThrottledOptionError(`${cls}: Strategy not found: ${spec}`);
      byClass.set(cls, s);
    } else byClass.set(cls, strategy(cls, spec, dflt));
  }
  return { byClass, gem: opts.gem, cooldownPeriod, cooldownThreshold };
}
