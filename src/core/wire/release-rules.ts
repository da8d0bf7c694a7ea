// What changed between Sidekiq releases, in one place. Every behaviour that
// differs by release is a named rule here, grouped by the part of Sidekiq it
// belongs to, and each rule names the release that changed it and how
// ("8.0.8: …"). The rest of the code never compares versions: it asks
// `releaseRules(profile).retry.discardedAt`.
//
// The boundaries were read in the public sidekiq tags (lib/sidekiq/*.rb of
// each release, not Changes.md, which files a few changes under the wrong
// release). schema/README.md ("What changed in which release") lists the
// same changes by release; test/wire/release-rules.test.ts pins the table for
// every release from 6.0.0 to 8.1.7 and checks that the README names every
// boundary.

/**
 * How `Queue#latency` reads a job: `enqueued_at` as seconds whatever its type;
 * `enqueued_at`, a Float as seconds and an Integer as ms; or `enqueued_at ||
 * created_at` by the same Float/Integer rule (api/latency.ts applies them).
 */
export type LatencyRule = "enqueued-seconds" | "enqueued-typed" | "enqueued-or-created-typed";

/** How a release writes job payloads (timestamp units and fields). */
export interface PayloadRules {
  /** 8.0.0: `created_at`, `enqueued_at`, `failed_at`, `retried_at` are Integer epoch ms (Float seconds before). */
  readonly time: "seconds" | "millis";
  /**
   * 7.2.1: `error_backtrace` is zlib'd JSON in strict base64 (`Base64.encode64`,
   * a newline every 60 characters, before; that encoding itself dates from 6.0.2).
   */
  readonly backtraceBase64: "mime" | "strict";
}

/** How a release's client pushes (argument checks, fields). */
export interface ClientRules {
  /** 7.1.2: `Client` deletes `enqueued_at` before `ZADD schedule` (a caller's value was kept before). */
  readonly scheduledDropsEnqueuedAt: boolean;
  /**
   * 7.0.0: `on_complex_arguments` defaults to `:raise`. 6.4.0 added the check
   * with `:warn` as its default; the bridge warns for every 6.x.
   */
  readonly strictArgs: "warn" | "raise";
}

/** How a release's ActiveJob adapter writes jobs. */
export interface ActiveJobRules {
  /**
   * 8.0.0: the adapter writes `Sidekiq::ActiveJob::Wrapper` (before:
   * `ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper`, from 7.3.3 a subclass of it).
   */
  readonly wrapperClass: string;
  /**
   * 7.0.0: not a Sidekiq change but the Rails that runs beside it (Debian's
   * pairing): 6.x fleets run Rails 6.1 (no `scheduled_at`, second-precision
   * `enqueued_at`, Client.push key order), 7.x and 8.x Rails 7.1 or later.
   */
  readonly defaultRails: "6.1" | "7.1";
}

/** A release's retry rules (delays, fields, dead set). */
export interface RetryRules {
  /**
   * The jitter added to a retry delay, as Ruby spells it (`count` is the new
   * retry_count). 6.2.2: `rand(10) * (count + 1)`; 8.0.0: `rand(10 * (count + 1))`.
   */
  readonly jitter: "rand(30)*(count+1)" | "rand(10)*(count+1)" | "rand(10*(count+1))";
  /**
   * How the retry time is summed. Before 6.2.2 a `sidekiq_retry_in` delay gets
   * no jitter; 6.2.2: `delay_for` returns delay + jitter for both; 6.5.2:
   * `Time.now.to_f + delay + jitter` (the same terms, added in another order).
   */
  readonly retryAt: "jitter-on-default-only" | "now+(delay+jitter)" | "now+delay+jitter";
  /**
   * What a `sidekiq_retry_in` answer means. Before 6.5.2 `.to_i`, used when > 0;
   * 6.5.2: `:discard`, `:kill`, or an Integer > 0 as the delay (a Float falls back
   * to the default); 7.0.7: `rv.to_i if rv.respond_to?(:to_i)` first (Floats truncate again).
   */
  readonly retryIn: "to_i" | "strategy" | "strategy-to_i";
  /**
   * `retry_for`. 7.1.3: a job is exhausted when its count is used up OR its
   * deadline passed; 8.1.0: a job with `retry_for` is judged by the deadline only.
   */
  readonly retryFor: "ignored" | "or-count" | "instead-of-count";
  /**
   * How the `retry_for` deadline reads `failed_at`. 7.x adds the number as
   * seconds (an 8.x millisecond value never expires there); 8.0.0: `time_for`
   * (a Float is seconds, an Integer ms, its sub-second part misread as µs);
   * 8.1.6: the sub-second part read as ms (Changes.md files it under 8.1.5).
   */
  readonly retryForClock: "seconds" | "time_for-usec" | "time_for";
  /** 6.0.4: the death handlers run after the dead-set insert (before it until 6.0.3). */
  readonly deathHandlersAfterMorgue: boolean;
  /** 7.2.0: `sidekiq_retries_exhausted` may return `:discard`: the job skips the dead set. */
  readonly exhaustedDiscard: boolean;
  /**
   * 8.0.7: both kinds of `:discard` (from `sidekiq_retry_in` and from
   * `sidekiq_retries_exhausted`) run the death handlers; before, they returned first.
   */
  readonly discardRunsDeathHandlers: boolean;
  /** 8.0.8: `:discard` and `dead: false` set `discarded_at` (Integer ms) on the in-memory job. */
  readonly discardedAt: boolean;
}

/** How a release's poller promotes scheduled and retry jobs. */
export interface ScheduledRules {
  /**
   * `random_poll_interval` with 10 or more processes. 8.0.10: `interval * rand * 2`
   * (`interval * rand` before). Below 10 processes it is `interval * rand + interval / 2` in every release.
   */
  readonly largeFleetPollInterval: "interval*rand" | "interval*rand*2";
}

/** How a release records metrics (keys, buckets, TTLs). */
export interface MetricsRules {
  /** 7.0.0: execution metrics are tracked by default (6.5.2's opt-in is not assumed). */
  readonly enabled: boolean;
  /**
   * 8.0.0: rollups `j|%y%m%d|%-H:%M` plus a 10-minute bucket, histogram
   * `h|<Class>-%-d-%-H:%-M` ("v8"); before: `j|%Y%m%d|%-H:%-M`, `<Class>-%d-%H:%-M` ("v7").
   */
  readonly keys: "v7" | "v8";
}

/** Launcher#❤ (the heartbeat) and #to_data (the process info). */
export interface LauncherRules {
  /** 6.0.2: a work entry's `payload` is the raw job string (the job object before). */
  readonly payloadString: boolean;
  /** 6.0.5: UNLINK the work hash (DEL before). */
  readonly unlink: boolean;
  /** 6.1.3: the process hash has `rss`. */
  readonly rss: boolean;
  /** 6.2.0: PING before the process hash, and `rtt_us` in it. */
  readonly rtt: boolean;
  /** 6.4.2: the work hash is `<identity>:work` (`<identity>:workers` before). */
  readonly workKey: "workers" | "work";
  /** Before 6.4.2: the six stat commands and the work hash share one MULTI. */
  readonly statsInWorkMulti: boolean;
  /** 6.4.2 – 6.5.x: the stat commands in their own MULTI (sent even when 0), the work hash in a pipeline. */
  readonly statsOwnMulti: boolean;
  /** 7.0.0: `BEAT_PAUSE` is 10 seconds (5 before). */
  readonly beatSeconds: 5 | 10;
  /**
   * 7.0.0: counters go through `flush_stats` (a pipeline, skipped when 0; also on
   * clear), and each beat flushes the execution metrics.
   */
  readonly flushStats: boolean;
  /** 7.0.2: `info.weights` is a tally hash; 7.0.3: one weights hash per capsule. */
  readonly weights: "none" | "tally" | "per-capsule";
  /** 7.0.3: `info.embedded`, and popped signals are ignored when embedded. */
  readonly embedded: boolean;
  /** 7.1.0: HSET the process hash (HMSET before). */
  readonly hset: boolean;
  /**
   * 7.2.3: the work hash in a MULTI, one multi-field HSET and its EXPIRE only
   * when busy (a pipeline of one HSET per thread before). launcher.rb is the same
   * in 7.2.3 and 7.3.0; Changes.md files it as "Fix potential heartbeat data leak".
   */
  readonly workMulti: boolean;
  /** 8.0.9: `info.capsules`. */
  readonly capsules: boolean;
  /** 8.1.2: `concurrency` is a field of the process hash, no longer in `info`. */
  readonly concurrencyField: boolean;
}

/** Sidekiq::API (api.rb) where its releases differ. */
export interface ApiRules {
  /**
   * `Queue#latency` / `default_queue_latency`. 8.0.0: a Float `enqueued_at` is
   * seconds, an Integer ms, none 0.0; 8.1.1: `enqueued_at || created_at` (calculate_latency).
   */
  readonly latency: LatencyRule;
  /** 6.5.2: `ProcessSet#cleanup` runs under the `process_cleanup` lock (SET NX EX 60). */
  readonly processCleanupLock: boolean;
  /** 7.3.5: `DeadSet#kill` ZADDs, then trims unless `trim: false` (one MULTI of ZADD and both trims before). */
  readonly deadSetKill: "multi" | "zadd-then-trim";
  /**
   * The limits `DeadSet#kill` trims by. 7.0.0: `Sidekiq::Config::DEFAULTS`
   * (10,000 jobs, 180 days) whatever the configuration says (7.0.9 api.rb:799-800);
   * 7.3.5: the configured `dead_max_jobs` / `dead_timeout_in_seconds` again, as
   * 6.x read them (`Sidekiq[:dead_max_jobs]`, 6.5.12 api.rb:876).
   */
  readonly deadSetKillLimits: "configured" | "defaults";
  /** 7.0.0: the Busy page lists processes by hostname in natural order (by identity before). */
  readonly busyByHostname: boolean;
}

/** IterableJob (job/iterable.rb, 7.3.0+) where its releases differ. */
export interface IterationRules {
  /** 7.3.3: `Sidekiq::Client#cancel!` writes `cancelled` into `it-<jid>`; the job checks it at start and at every flush. */
  readonly cancellation: boolean;
  /** 8.0.0: the state's TTL is set once (`EXPIRE … NX`), not renewed at every flush. */
  readonly expireOnce: boolean;
  /** 8.0.4: an iteration that raises flushes the cursor first, so the retry resumes at that item. */
  readonly flushOnError: boolean;
  /** 8.0.8: `max_iteration_runtime`, and a warning when one item outlasts the shutdown timeout. */
  readonly maxIterationRuntime: boolean;
}

/** Everything that differs between Sidekiq releases on the wire, for one release (`releaseRules(profile)`). */
export interface ReleaseRules {
  /** The release these rules describe. */
  readonly version: string;
  readonly payload: PayloadRules;
  readonly client: ClientRules;
  readonly activeJob: ActiveJobRules;
  readonly retry: RetryRules;
  readonly scheduled: ScheduledRules;
  readonly metrics: MetricsRules;
  readonly launcher: LauncherRules;
  readonly api: ApiRules;
  readonly iteration: IterationRules;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map((x) => parseInt(x, 10) || 0);
  const pb = b.split(".").map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** True when `version` >= `min` (numeric comparison of dotted parts). */
export function versionAtLeast(version: string, min: string): boolean {
  return compareVersions(version, min) >= 0;
}

function build(version: string): ReleaseRules {
  const since = (release: string) => versionAtLeast(version, release);
  return {
    version,
    payload: {
      time: since("8.0.0") ? "millis" : "seconds",
      backtraceBase64: since("7.2.1") ? "strict" : "mime",
    },
    client: {
      scheduledDropsEnqueuedAt: since("7.1.2"),
      strictArgs: since("7.0.0") ? "raise" : "warn",
    },
    activeJob: {
      wrapperClass: since("8.0.0")
        ? "Sidekiq::ActiveJob::Wrapper"
        : "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
      defaultRails: since("7.0.0") ? "7.1" : "6.1",
    },
    retry: {
      jitter: since("8.0.0") ? "rand(10*(count+1))" : since("6.2.2") ? "rand(10)*(count+1)" : "rand(30)*(count+1)",
      retryAt: since("6.5.2") ? "now+delay+jitter" : since("6.2.2") ? "now+(delay+jitter)" : "jitter-on-default-only",
      retryIn: since("7.0.7") ? "strategy-to_i" : since("6.5.2") ? "strategy" : "to_i",
      retryFor: since("8.1.0") ? "instead-of-count" : since("7.1.3") ? "or-count" : "ignored",
      retryForClock: since("8.1.6") ? "time_for" : since("8.0.0") ? "time_for-usec" : "seconds",
      deathHandlersAfterMorgue: since("6.0.4"),
      exhaustedDiscard: since("7.2.0"),
      discardRunsDeathHandlers: since("8.0.7"),
      discardedAt: since("8.0.8"),
    },
    scheduled: {
      largeFleetPollInterval: since("8.0.10") ? "interval*rand*2" : "interval*rand",
    },
    metrics: {
      enabled: since("7.0.0"),
      keys: since("8.0.0") ? "v8" : "v7",
    },
    launcher: {
      payloadString: since("6.0.2"),
      unlink: since("6.0.5"),
      rss: since("6.1.3"),
      rtt: since("6.2.0"),
      workKey: since("6.4.2") ? "work" : "workers",
      statsInWorkMulti: !since("6.4.2"),
      statsOwnMulti: since("6.4.2") && !since("7.0.0"),
      beatSeconds: since("7.0.0") ? 10 : 5,
      flushStats: since("7.0.0"),
      weights: since("7.0.3") ? "per-capsule" : since("7.0.2") ? "tally" : "none",
      embedded: since("7.0.3"),
      hset: since("7.1.0"),
      workMulti: since("7.2.3"),
      capsules: since("8.0.9"),
      concurrencyField: since("8.1.2"),
    },
    api: {
      latency: since("8.1.1") ? "enqueued-or-created-typed" : since("8.0.0") ? "enqueued-typed" : "enqueued-seconds",
      processCleanupLock: since("6.5.2"),
      deadSetKill: since("7.3.5") ? "zadd-then-trim" : "multi",
      deadSetKillLimits: since("7.0.0") && !since("7.3.5") ? "defaults" : "configured",
      busyByHostname: since("7.0.0"),
    },
    iteration: {
      cancellation: since("7.3.3"),
      expireOnce: since("8.0.0"),
      flushOnError: since("8.0.4"),
      maxIterationRuntime: since("8.0.8"),
    },
  };
}

function deepFreeze<T extends object>(o: T): T {
  for (const v of Object.values(o)) if (typeof v === "object" && v !== null) deepFreeze(v);
  return Object.freeze(o);
}

// A fleet names a handful of releases; the bound only guards against a Redis
// full of made-up versions.
const MAX_CACHED = 64;
const cache = new Map<string, ReleaseRules>();

/**
 * The rules of a Sidekiq release (`"7.3.2"`, or a profile's `version`); one
 * frozen object per version. Releases newer than the last known one keep its rules.
 */
export function releaseRules(release: string | { readonly version: string }): ReleaseRules {
  const version = typeof release === "string" ? release : release.version;
  let rules = cache.get(version);
  if (rules === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    rules = deepFreeze(build(version));
    cache.set(version, rules);
  }
  return rules;
}
