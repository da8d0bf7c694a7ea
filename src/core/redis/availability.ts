// Telling "Redis cannot be reached" apart from other failures: one clear
// error instead of ioredis' retry noise, a bounded wait for a connection, and
// one log line per outage (lost, then back) for a group of connections.
import type { Redis } from "ioredis";
import { isPermissionDenied, permissionError, permissionLine, type RedisPermissionError } from "./acl.js";

/** Redis could not be reached in time; `message` names where and why (never a password). */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

const lastErrors = new WeakMap<Redis, Error>();
const recording = new WeakSet<Redis>();

/**
 * Gives a connection we opened an 'error' listener, so ioredis never prints
 * "Unhandled error event" stacks; the last socket error is kept to explain a
 * later failure.
 */
export function recordErrors(redis: Redis): Redis {
  if (recording.has(redis)) return redis;
  recording.add(redis);
  redis.on("error", (e: Error) => lastErrors.set(redis, e));
  redis.on("ready", () => lastErrors.delete(redis));
  return redis;
}

/** The connection's last socket error since it was last ready, if any (or the refusal that closed it). */
export function lastErrorOf(redis: Redis): Error | undefined {
  return refusals.get(redis) ?? lastErrors.get(redis);
}

const refusals = new WeakMap<Redis, Error>();

/**
 * `e` as a RedisPermissionError when Redis refused it for the user's ACL,
 * or when it is the failure of a connection closed for that (a refused SELECT).
 */
export function aclRefusal(redis: Redis, e: unknown): RedisPermissionError | undefined {
  const user = redis.options?.username;
  return permissionError(e, user) ?? (isConnectionError(e) ? permissionError(refusals.get(redis), user) : undefined);
}

/** True once the connection was closed because its user may not SELECT its database. */
export function isClosedByAcl(redis: Redis): boolean {
  return refusals.has(redis);
}

/**
 * A user whose ACL refuses SELECT: ioredis would go on in database 0 and
 * write the jobs there. The connection is closed instead, before the
 * commands queued for it are written (ioredis has already ended the socket
 * when its ready check flushes them); what waits on it fails with the
 * refusal, as a RedisPermissionError naming the rule.
 */
export function closeOnRefusedSelect(redis: Redis): Redis {
  redis.on("error", (e: Error) => {
    if (!/'select' command/.test(e.message) || !isPermissionDenied(e)) return;
    refusals.set(redis, e);
    redis.disconnect();
  });
  return redis;
}

/** Where a connection points: host:port, or the Sentinel master's name. */
export function describeRedis(redis: Redis): string {
  const o = redis.options;
  if (o.sentinels?.length) return `Sentinel master "${o.name ?? "mymaster"}"`;
  if (o.path) return o.path;
  return `${o.host ?? "127.0.0.1"}:${o.port ?? 6379}`;
}

/** A socket error in a few words: "ECONNREFUSED 127.0.0.1:6379", else its message. */
export function reasonOf(e: unknown): string {
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  if (err?.code && err.address) return `${err.code} ${err.address}${err.port ? `:${err.port}` : ""}`;
  if (err?.code && /^E[A-Z]+$/.test(err.code)) return err.code;
  return e instanceof Error ? e.message : String(e);
}

const CONNECTION_FAILURE =
  /Connection is closed|Stream isn't writeable|max retries per request|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|Command timed out|connect ETIMEDOUT|All sentinels are unreachable|Socket timeout|Command aborted due to connection close/i;

/** True for failures that mean "Redis is not there" (as opposed to a reply error). */
export function isConnectionError(e: unknown): boolean {
  if (e instanceof RedisUnavailableError) return true;
  const err = e as Error | undefined;
  return err?.name === "MaxRetriesPerRequestError" || CONNECTION_FAILURE.test(err?.message ?? "");
}

/** The error to show for a connection that is not there: where, and the socket's own reason. */
export function unavailable(redis: Redis, cause?: unknown): RedisUnavailableError {
  const why = lastErrorOf(redis) ?? cause;
  // A connection closed for its user's ACL (a refused SELECT): the rule to add.
  const reason = why && (permissionLine(reasonOf(why), redis.options?.username) ?? reasonOf(why));
  return new RedisUnavailableError(
    `Redis unreachable at ${describeRedis(redis)}${reason ? ` (${reason})` : ""}`,
    why === undefined ? undefined : { cause: why },
  );
}

/**
 * Redis refused a write because it reached maxmemory under the noeviction
 * policy ("OOM command not allowed ..."). Redis checks this before each
 * write command runs, so the refused command wrote nothing.
 */
export class RedisOutOfMemoryError extends Error {
  override name = "RedisOutOfMemoryError";
}

/** Redis's reply to a write at maxmemory under noeviction. */
export function isOutOfMemory(e: unknown): boolean {
  return /^OOM /.test((e as Error | undefined)?.message ?? "");
}

/**
 * A connection failure as a RedisUnavailableError, a refusal at maxmemory as
 * a RedisOutOfMemoryError, a refusal of the user's ACL as a
 * RedisPermissionError; anything else as it is.
 */
export function explain(redis: Redis, e: unknown): unknown {
  const denied = aclRefusal(redis, e);
  if (denied) return denied;
  if (isOutOfMemory(e) && !(e instanceof RedisOutOfMemoryError))
    return new RedisOutOfMemoryError(
      `Redis at ${describeRedis(redis)} is out of memory (maxmemory reached, policy noeviction) and refused the write; ` +
        `nothing of the refused command was written. Free memory or raise maxmemory. (${(e as Error).message})`,
      { cause: e },
    );
  return isConnectionError(e) && !(e instanceof RedisUnavailableError) ? unavailable(redis, e) : e;
}

const NOT_READY: ReadonlySet<string> = new Set(["wait", "connecting", "connect", "reconnecting", "close", "end"]);

/** One wait per connection and bound, however many calls wait on it. */
const waits = new WeakMap<Redis, Map<number, Promise<void>>>();

/** Whether whenReady would wait (or fail): the connection is not up yet, or is gone. */
export function awaitsConnection(redis: Redis): boolean {
  return NOT_READY.has(redis.status);
}

/**
 * Resolves once the connection is ready; rejects with a RedisUnavailableError
 * after `ms` (or at once when it was closed for good). Calls made while it
 * connects share one wait: fifty pushes at start-up add one pair of listeners
 * and one timer, not fifty (ioredis warns of a leak past ten listeners).
 */
export function whenReady(redis: Redis, ms: number): Promise<void> {
  // Only ioredis' not-yet-connected states wait ("ready", "monitoring", or a stand-in without a status go on).
  if (!awaitsConnection(redis)) return Promise.resolve();
  if (redis.status === "end") return Promise.reject(unavailable(redis, new Error("Connection is closed.")));
  let byBound = waits.get(redis);
  const pending = byBound?.get(ms);
  if (pending) return pending;
  if (redis.status === "wait") redis.connect().catch(() => undefined);
  const wait = new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      redis.off("ready", onReady);
      redis.off("end", onEnd);
      byBound?.delete(ms);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(unavailable(redis, new Error("Connection is closed.")));
    const timer = setTimeout(() => done(unavailable(redis, new Error(`no connection within ${ms} ms`))), ms);
    redis.once("ready", onReady);
    redis.once("end", onEnd);
  });
  if (!byBound) waits.set(redis, (byBound = new Map()));
  byBound.set(ms, wait);
  return wait;
}

/** Runs `op`, turning connection failures into a RedisUnavailableError. */
export async function explained<T>(redis: Redis, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    throw explain(redis, e);
  }
}

export interface WatchLogger {
  lost(message: string): void;
  back(message: string): void;
}

/**
 * One log line when a group of connections (a worker's, a client's) loses
 * Redis, one when all are back: not a line per reconnect attempt. A
 * connection that never connected is not reported here: whoever waits for it
 * (start-up, a push) reports that.
 */
export class ConnectionWatch {
  private readonly down = new Set<Redis>();
  private reported = false;
  private muted = false;

  constructor(private readonly log: WatchLogger) {}

  add(redis: Redis): Redis {
    recordErrors(redis);
    let connected = redis.status === "ready";
    redis.on("ready", () => {
      connected = true;
      this.down.delete(redis);
      this.settle();
    });
    redis.on("error", (e: Error) => {
      if (!connected) return;
      this.down.add(redis);
      if (this.reported || this.muted) return;
      this.reported = true;
      this.log.lost(`Redis connection lost (${reasonOf(e)}); retrying`);
    });
    redis.on("end", () => {
      this.down.delete(redis);
      this.settle();
    });
    return redis;
  }

  /** True while a watched connection is down. */
  get isDown(): boolean {
    return this.down.size > 0;
  }

  /** No more lines (the owner is closing its connections). */
  mute(): void {
    this.muted = true;
  }

  private settle(): void {
    if (!this.reported || this.down.size > 0) return;
    this.reported = false;
    if (!this.muted) this.log.back("Redis connection back");
  }
}

/** What `bounded` returns when the deadline came first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/** `p`, or TIMED_OUT at `deadline` (epoch ms); `p` is left to settle on its own. */
export function bounded<T>(p: Promise<T>, deadline: number): Promise<T | typeof TIMED_OUT> {
  const ms = deadline - Date.now();
  if (ms <= 0) {
    p.catch(() => undefined);
    return Promise.resolve(TIMED_OUT);
  }
  // One promise and one timer: every push's write is bounded, and
  // Promise.race with a timer promise and a finally made four more objects.
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(TIMED_OUT), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/**
 * Closes a connection we opened: QUIT when it is up (answered within `ms`),
 * else, or after that, drop the socket. Never waits on a reconnect loop.
 */
export async function closeConnection(redis: Redis, ms = 1000): Promise<void> {
  if (redis.status === "ready") {
    await bounded(
      redis.quit().catch(() => undefined),
      Date.now() + ms,
    );
  }
  if (redis.status !== "end") redis.disconnect();
}
