// Sidekiq::Config for Node: the worker's options resolved once, with their
// defaults, checked, and frozen. Each subsystem reads its own part (the
// fetch its `fetch`, the poller its `scheduled`, the retry path its `retry`),
// so nothing copies options field by field from layer to layer.
import { type Capsule, makeCapsule } from "../server/capsule.js";
import type { UnknownClassPolicy } from "../server/types.js";
import { isLogLevel, type LogFormat, type LogLevel } from "../logging/logger.js";
import { networkTimeoutFor, type RedisSource } from "../redis/connection.js";
import type { DialectLike } from "../wire/dialect.js";
import {
  DEFAULT_DEAD_MAX_JOBS,
  DEFAULT_DEAD_TIMEOUT_SECONDS,
  DEFAULT_MAX_RETRY_ATTEMPTS,
} from "../wire/sidekiq-constants.js";
import type { CoreWorkerOptions } from "./worker-options.js";

/** The worker's settings, resolved and frozen: what every subsystem reads. */
export interface ResolvedOptions {
  readonly redis: RedisSource;
  readonly dialect: DialectLike | "auto";
  readonly autoFallback: DialectLike | undefined;
  readonly capsules: readonly Capsule[];
  /** Seconds to wait for running jobs at shutdown. */
  readonly timeout: number;
  /** How long start() waits for an unreachable Redis before it rejects. */
  readonly connectWaitMs: number;
  /**
   * How long a connection may stay silent before it is made again (the
   * redis source's networkTimeoutMs, SIDEKIQ_BRIDGE_NETWORK_TIMEOUT, or 3 s;
   * an ioredis instance passed in: its own socketTimeout). Fetches block 2 s
   * on top.
   */
  readonly networkTimeoutMs: number;
  readonly unknownClass: UnknownClassPolicy;
  /** Add-ons whose marked jobs run without the add-on (see CoreWorkerOptions.runWithout). */
  readonly runWithout: readonly string[];
  readonly fetch: {
    readonly reliable: boolean;
    readonly lanes: number | undefined;
    /** Reliable fetch only: fetch the next batch while short jobs still hold the slots. */
    readonly ahead: boolean;
    /** How often (ms) to look for dead processes' working lists. */
    readonly recoveryIntervalMs: number;
  };
  /** Sidekiq's Scheduled::Poller (retries and scheduled jobs). */
  readonly scheduled: {
    readonly enabled: boolean;
    readonly pollIntervalAverage: number | undefined;
    readonly averageScheduledPollInterval: number | undefined;
  };
  readonly retry: {
    readonly maxRetries: number;
    readonly deadTimeoutSeconds: number;
    readonly deadMaxJobs: number;
  };
  /** What the process hash shows in the Web UI. */
  readonly process: {
    readonly tag: string;
    readonly labels: readonly string[];
    readonly embedded: boolean;
  };
  readonly logging: {
    readonly level: LogLevel;
    readonly format: LogFormat;
    readonly skipDefaultJobLogging: boolean;
    readonly loggedJobAttributes: readonly string[] | undefined;
  };
}

const UNKNOWN_CLASS_POLICIES: readonly UnknownClassPolicy[] = ["retry", "requeue", "dead"];

/** A worker option with a value it cannot take; `option` names it (the CLI names its flag instead). */
export class WorkerOptionError extends Error {
  override name = "WorkerConfigError";
  constructor(
    readonly option: keyof CoreWorkerOptions,
    readonly must: string,
    readonly got: unknown,
  ) {
    super(`${option} must be ${must}, got ${JSON.stringify(got)}`);
  }
}

/** Raises with the option's name and what it must be. */
function check(ok: boolean, option: keyof CoreWorkerOptions, must: string, got: unknown): void {
  if (!ok) throw new WorkerOptionError(option, must, got);
}

function positive(option: keyof CoreWorkerOptions, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  check(Number.isFinite(v) && v > 0, option, "a positive number", v);
  return v;
}

/** Resolves a worker's options once: defaults, checks (a clear error naming the option), frozen. */
export function resolveOptions(o: CoreWorkerOptions): ResolvedOptions {
  const fetch = o.fetch ?? "reliable";
  check(fetch === "reliable" || fetch === "basic", "fetch", "reliable or basic", fetch);
  const unknownClass = o.unknownClass ?? "retry";
  check(UNKNOWN_CLASS_POLICIES.includes(unknownClass), "unknownClass", "retry, requeue or dead", unknownClass);
  const level = o.logLevel ?? "info";
  check(isLogLevel(level), "logLevel", "debug, info, warn or error", level);
  const format = o.logFormat ?? "text";
  check(format === "text" || format === "json", "logFormat", "text or json", format);
  const capsules = o.capsules?.length
    ? o.capsules
    : [{ name: "default", concurrency: o.concurrency ?? 5, queues: o.queues ?? ["default"] }];
  const reliable = fetch === "reliable";
  return deepFreeze({
    redis: o.redis,
    dialect: o.dialect ?? "auto",
    autoFallback: o.autoFallback,
    capsules: capsules.map(makeCapsule),
    timeout: positive("timeout", o.timeout, 25),
    connectWaitMs: o.connectWaitMs ?? 5000,
    networkTimeoutMs: networkTimeoutFor(o.redis),
    unknownClass,
    runWithout: o.runWithout ?? [],
    fetch: {
      reliable,
      lanes: o.fetchLanes,
      ahead: reliable && o.fetchAhead !== false,
      recoveryIntervalMs: positive("recoveryIntervalMs", o.recoveryIntervalMs, 60_000),
    },
    scheduled: {
      enabled: o.scheduler !== false,
      pollIntervalAverage: o.pollIntervalAverage,
      averageScheduledPollInterval: o.averageScheduledPollInterval,
    },
    retry: {
      maxRetries: o.maxRetries ?? DEFAULT_MAX_RETRY_ATTEMPTS,
      deadTimeoutSeconds: o.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS,
      deadMaxJobs: o.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS,
    },
    process: { tag: o.tag ?? "", labels: o.labels ?? [], embedded: o.embedded ?? false },
    logging: {
      level,
      format,
      skipDefaultJobLogging: o.skipDefaultJobLogging ?? false,
      loggedJobAttributes: o.loggedJobAttributes,
    },
  });
}

/** Freezes the config's own objects and arrays; a Redis client or URL object passed in is left as it is. */
function deepFreeze<T extends object>(v: T, depth = 0): T {
  for (const [k, x] of Object.entries(v)) {
    if (k === "redis" && depth === 0) continue;
    if (x !== null && typeof x === "object") deepFreeze(x as object, depth + 1);
  }
  return Object.freeze(v);
}
