// What a Client is made with (types only, so it costs no module at run time):
// kept apart from client.ts so the class opens on its push path.
import type { RedisSource } from "../redis/connection.js";
import type { DialectLike } from "../wire/dialect.js";
import type { ContractOptions } from "../contract/checker.js";
import type { ClientMiddleware } from "./middleware.js";
import type { StrictArgsMode } from "./strict-args.js";

/** Options of `Client`: the Redis, the wire dialect (`6`, `7`, `8`, an exact version, or `"auto"` with `autoFallback`), argument checks, validation and routing of queues to Redis shards. */
export interface ClientOptions {
  /** The Redis to push to (ioredis instance, URL, or connection options). */
  redis: RedisSource;
  /** The wire dialect: 6, 7, 8, an exact version ("7.3.2"), or "auto" (the default): what the oldest live Ruby process reads. */
  dialect?: DialectLike | "auto";
  /** With "auto": what to write when no Ruby process is live. Without it, pushing then fails. */
  autoFallback?: DialectLike;
  /** How often "auto" looks at the fleet again, in ms (default 30 s). */
  autoRefreshMs?: number;
  /** Strict argument check; default as the dialect's Sidekiq: warn for 6, raise for 7 and 8. */
  strictArgs?: StrictArgsMode;
  /** Client middleware, in order (`client.middleware` adds, inserts and removes later). */
  middleware?: ClientMiddleware[];
  /** Sharding: the Redis for a queue (default: `redis` for every queue). */
  route?: (queue: string) => RedisSource;
  /** Validate every payload against schema/ before pushing (default: off; on with SIDEKIQ_BRIDGE_VALIDATE=1). */
  validate?: boolean;
  warn?: (message: string) => void;
  /** How long a push waits for an unreachable Redis before a RedisUnavailableError (default 5000 ms); a lost connection
   * is reported once through `warn` ("Redis connection lost (...); retrying", then "back"). */
  connectWaitMs?: number;
  /** The job contract (`sidekiq-bridge contract pull`): unknown classes, wrong arity or keywords are warned about or
   * refused before anything reaches Redis (see docs/CONTRACT.md). `client.unchecked` pushes without it. */
  contract?: ContractOptions;
}
