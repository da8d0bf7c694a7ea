import { RedisUnavailableError } from "../redis/availability.js";

/** Sidekiq's client-side ArgumentError, with Ruby's own wording where there is one. */
export class SidekiqArgumentError extends Error {
  override name = "SidekiqArgumentError";
}

export const NO_FLEET_TO_DETECT =
  'dialect "auto" found no live Ruby Sidekiq process in this Redis\'s `processes` set, so it cannot tell which timestamp format to write. Start a Ruby process, or create the client with dialect: 6 | 7 | 8 or autoFallback.';

/** `dialect: "auto"` could not tell what the live fleet reads. */
export class DialectDetectionError extends Error {
  override name = "DialectDetectionError";
}

/**
 * push_bulk failed part-way. Its batches are written in order, each in one
 * LPUSH (or ZADD), so the jobs before `firstUnwritten` are in Redis and those
 * from it on are not, except `uncertain`: a batch in flight when the
 * connection was lost, which Redis may or may not have written (a refused
 * batch, e.g. at maxmemory, is certainly not written). Pushing
 * `args.slice(firstUnwritten)` again, after checking `uncertain`, finishes it.
 */
export class BulkPushError extends Error {
  override name = "BulkPushError";
  constructor(
    message: string,
    /** One entry per args array before `firstUnwritten`: its jid, or null where a middleware stopped it. */
    readonly written: ReadonlyArray<string | null>,
    /** Index in `args` of the first job not known to be written. */
    readonly firstUnwritten: number,
    /** Jids of the batch in flight when the connection was lost: written or not, Redis did not say. */
    readonly uncertain: readonly string[],
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A push was sent and its reply never came: the connection was lost, or went
 * silent past the bound, with the command on the wire. Redis may have written
 * it (once; ioredis sends it again on a new connection, as Sidekiq's client
 * retries once). `uncertain` holds its jids. Still a RedisUnavailableError.
 */
export class PushUncertainError extends RedisUnavailableError {
  override name = "PushUncertainError";
  constructor(
    message: string,
    /** The jids sent: written or not, Redis did not say. */
    readonly uncertain: readonly string[],
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}
