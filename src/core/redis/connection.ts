// What a client or worker accepts as "a Redis": an ioredis instance (used as
// is, never closed by us), a URL, or options for TLS, ACL and Sentinel.
import { createRequire } from "node:module";
import type * as Ioredis from "ioredis";
import type { RedisOptions } from "ioredis";
import { RECONNECT_ERRORS } from "./retry-once.js";
import { closeOnRefusedSelect, recordErrors } from "./availability.js";
import { networkOptions, networkTimeoutOf, resolveNetworkTimeout, watchSilence } from "./network.js";

// ioredis is CommonJS. Loaded by `import` from an ES module, Node 20 takes it
// through its ES module loader, which cost 4-6 MB more peak RSS in every
// process than require() (bench/README.md, "Memory"). The class is the same
// either way (one module cache), so an application's instance still passes
// `instanceof Redis`.
const { Redis } = createRequire(import.meta.url)("ioredis") as typeof Ioredis;
type Redis = Ioredis.Redis;

/** Connection options: host and port or Sentinel (`sentinels`, `name`), TLS, ACL user and password, database. */
export interface RedisConnectionOptions {
  /** redis:// or rediss:// (TLS); user and password in the URL are the ACL login. */
  url?: string;
  username?: string;
  password?: string;
  db?: number;
  /** TLS options (ca, cert, key, servername, rejectUnauthorized, ...). */
  tls?: RedisOptions["tls"];
  /** Redis Sentinel: the sentinels and the master's name. */
  sentinels?: Array<{ host: string; port: number }>;
  name?: string;
  sentinelPassword?: string;
  /**
   * How long the connection may stay silent before it is dropped and made
   * again, in ms: connect, and any reply (a fetch's blocking wait on top).
   * Default: SIDEKIQ_BRIDGE_NETWORK_TIMEOUT (seconds), else 3 s as Sidekiq 8.
   */
  networkTimeoutMs?: number;
  /** Any other ioredis option (a socketTimeout here wins over networkTimeoutMs). */
  ioredis?: RedisOptions;
}

/** A Redis to use: an ioredis instance (used as is, never closed by the bridge), a `redis://` / `rediss://` URL, or connection options. */
export type RedisSource = Redis | string | RedisConnectionOptions;

export interface OwnedRedis {
  redis: Redis;
  /** True when we opened it and so must close it. */
  owned: boolean;
}

/**
 * An ioredis client, also one from another copy of the ioredis package (an
 * app's own dependency): `instanceof` alone would take it for options and
 * quietly connect to the default 127.0.0.1:6379 instead.
 */
function isIoredisClient(source: RedisSource): source is Redis {
  if (source instanceof Redis) return true;
  const s = source as { duplicate?: unknown; pipeline?: unknown; options?: unknown };
  return typeof source === "object" && typeof s.duplicate === "function" && typeof s.pipeline === "function";
}

/**
 * The network timeout of a source: its networkTimeoutMs, else the
 * environment's, else 3 s; an ioredis instance's own socketTimeout (the
 * default where it has none).
 */
export function networkTimeoutFor(source: RedisSource): number {
  if (isIoredisClient(source)) return networkTimeoutOf(source) ?? resolveNetworkTimeout();
  return resolveNetworkTimeout(typeof source === "object" ? source.networkTimeoutMs : undefined);
}

/** Opens a connection, every read and connect bounded by the network timeout (or adopts an ioredis instance, as is). */
export function connectRedis(source: RedisSource, lazy = false): OwnedRedis {
  if (isIoredisClient(source)) return { redis: source, owned: false };
  const base: RedisOptions = {
    // Under the testing entry: no socket until a command is sent (none is, in fake or inline mode).
    lazyConnect: lazy,
    // Every read and connect bounded: a silently dropped connection is found and made again.
    ...networkOptions(networkTimeoutFor(source)),
    // After a failover the old master answers READONLY: reconnect and resend.
    reconnectOnError: (err) => (RECONNECT_ERRORS.test(err.message) ? 2 : false),
    maxRetriesPerRequest: 20,
    // disconnect() waits this long for the socket to close before destroying
    // it (and holds the process open meanwhile): a frozen or gone Redis never
    // closes it, so do not wait the default 2 s.
    disconnectTimeout: 200,
    // No CLIENT SETINFO on connect: the bridge's ACL line (redis/acl.ts) then
    // needs no CLIENT subcommand, which Redis 7.0 could not even name.
    disableClientInfo: true,
  };
  if (typeof source === "string")
    return { redis: closeOnRefusedSelect(watchSilence(recordErrors(new Redis(source, base)))), owned: true };
  const opts: RedisOptions = { ...base, ...source.ioredis };
  if (source.username !== undefined) opts.username = source.username;
  if (source.password !== undefined) opts.password = source.password;
  if (source.db !== undefined) opts.db = source.db;
  if (source.tls !== undefined) opts.tls = source.tls;
  if (source.sentinels) {
    opts.sentinels = source.sentinels;
    opts.name = source.name ?? "mymaster";
    if (source.sentinelPassword !== undefined) opts.sentinelPassword = source.sentinelPassword;
  }
  // Every connection we open has an 'error' listener: no "Unhandled error event" stacks.
  const redis = source.url && !source.sentinels ? new Redis(source.url, opts) : new Redis(opts);
  return { redis: closeOnRefusedSelect(watchSilence(recordErrors(redis))), owned: true };
}
