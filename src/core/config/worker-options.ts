// What a user may set on a worker (Sidekiq's `Sidekiq.configure_server`):
// one interface, read once by resolveOptions (resolve.ts) into the
// frozen ResolvedOptions every subsystem reads its own part of. To add an
// option: declare it here, give it its default in resolve.ts (and a flag in
// src/assembly/worker-command.ts if the command line should set it), then read it from the
// config where it is used. Add-ons' options (cron, unique-jobs) are declared
// by the add-ons themselves (src/assembly/registry.ts).
import type { CapsuleConfig } from "../server/capsule.js";
import type { ErrorHandler } from "../server/error-handler.js";
import type { UnknownClassPolicy } from "../server/types.js";
import type { DeathHandler } from "../server/types.js";
import type { LogFormat, LoggerLike, LogLevel } from "../logging/logger.js";
import type { RedisSource } from "../redis/connection.js";
import type { DialectLike } from "../wire/dialect.js";

/** Options of `Worker`: the Redis, the dialect, queues and concurrency (or capsules), the shutdown timeout, fetch mode, poller and logger. */
export interface CoreWorkerOptions {
  redis: RedisSource;
  /** 6, 7, 8, an exact version, or "auto" (default): the oldest live Ruby process's. */
  dialect?: DialectLike | "auto";
  autoFallback?: DialectLike;
  /** How often "auto" looks at the fleet again, in ms (default 30 s): the heartbeat, retries and pushes follow it. */
  autoRefreshMs?: number;
  /** The default capsule: queues (with optional weights, "critical,2") and concurrency. */
  queues?: Array<string | [string, number]>;
  concurrency?: number;
  /** More capsules, each with its own queues and concurrency. */
  capsules?: CapsuleConfig[];
  tag?: string;
  labels?: string[];
  /**
   * Seconds to wait for running jobs at shutdown before aborting them
   * (Sidekiq's -t, 25). stop() settles within this plus a few seconds
   * (3 s for Redis work) whatever Redis does.
   */
  timeout?: number;
  /** How long start() waits for Redis before it rejects with a RedisUnavailableError (default 5000 ms). */
  connectWaitMs?: number;
  unknownClass?: UnknownClassPolicy;
  /**
   * "reliable" (default): each fetched job waits in a working list of this
   * process until done, and a crashed process's jobs are recovered.
   * "basic": Sidekiq's BRPOP (a crash loses the jobs it was running).
   */
  fetch?: "reliable" | "basic";
  /**
   * Fetch connections per capsule: one's round trip overlaps the other's
   * jobs. Default: basic fetch 1 (each lane may fetch only its share of the
   * free slots, so more lanes mean smaller batches and more fetches);
   * reliable fetch 2 from concurrency 4, else 1, and with fetchAhead: false
   * 2 from 16. Reliable fetch with fetch-ahead: each lane fetches up to the
   * whole concurrency (what finds no free slot waits, see fetchAhead).
   * Unset, basic fetch on a slow network (full fetches from a backlog take over
   * 5 ms) opens more lanes, up to 8, so several fetches are in flight as with
   * Sidekiq's one BRPOP per idle processor; set, the number is kept.
   */
  fetchLanes?: number;
  /**
   * Reliable fetch only (default true): while the queues have a backlog and
   * jobs take under 5 ms on average, fetch the next batch before the slots
   * free, so no slot waits for a round trip to Redis. At most one batch per
   * fetch lane waits (the concurrency times the lanes), in this process's
   * working hash (a crash loses none); a job still waiting after a second
   * goes back to the head of its queue.
   */
  fetchAhead?: boolean;
  /** How often (ms) to look for dead processes' working lists (default 60 s). */
  recoveryIntervalMs?: number;
  /** Run the scheduled/retry poller (default true). */
  scheduler?: boolean;
  pollIntervalAverage?: number;
  averageScheduledPollInterval?: number;
  maxRetries?: number;
  deadTimeoutSeconds?: number;
  deadMaxJobs?: number;
  /**
   * Add-ons (by name: "uniqueJobs", "proBatches"...) whose jobs this worker
   * may run without running the add-on. By default a job carrying an add-on's
   * marker (a unique-jobs `lock`, a Pro batch `bid`) that this worker does not
   * run is handed back to its queue for a process that does; named here, it
   * runs, and the worker says once what that breaks.
   */
  runWithout?: string[];
  /** Embedded processes hide Quiet/Stop in the Web UI and ignore remote signals' kill (default false). */
  embedded?: boolean;
  /**
   * Any `(msg, ctx)` logger, or a pino-style `(obj, msg)` one (recognised by
   * its `child` and `bindings`; wrap others with objectFirstLogger). Default:
   * Sidekiq's text lines on stderr.
   */
  logger?: LoggerLike;
  /** For the default logger: "info" (default), "debug", "warn", "error". */
  logLevel?: LogLevel;
  /** For the default logger: "text" (Sidekiq's Pretty lines, default) or "json" (Sidekiq's JSON formatter). */
  logFormat?: LogFormat;
  /** Sidekiq's `skip_default_job_logging`: no `start`/`done`/`fail` line per job. */
  skipDefaultJobLogging?: boolean;
  /** Sidekiq's `logged_job_attributes`: payload keys added to a job's log context (default bid, tags). */
  loggedJobAttributes?: string[];
  /** Sidekiq's `error_handlers`: `(error, { context, job })` for every error the worker reports. */
  errorHandlers?: ErrorHandler[];
  /** Sidekiq's `death_handlers`: `(job, error)` for every job that dies (same as onDeath). */
  deathHandlers?: DeathHandler[];
}
