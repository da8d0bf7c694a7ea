// One way for a command to reach Redis: connect and PING now, so a bad host
// or password fails at once with its reason (never the password), then the
// API on that connection, closed whatever happens; and a client to push with
// in the format --dialect names.
import type { Redis } from "ioredis";
import { type ApiOptions, SidekiqApi } from "../../core/api/sidekiq-api.js";
import { Client } from "../../core/client/client.js";
import { DialectDetectionError } from "../../core/client/errors.js";
import { connectRedis } from "../../core/redis/connection.js";
import { dialect, version } from "./command.js";
import { CommandError } from "./errors.js";
import { maskUrl, redisUrl, scrub } from "./redis-url.js";

/**
 * Connects and PINGs, or throws a CommandError with the reason within a few
 * seconds (the connect and each reply bounded by the network timeout).
 */
export async function connectCli(url: string): Promise<Redis> {
  const { redis } = connectRedis({
    url,
    ioredis: {
      lazyConnect: true,
      maxRetriesPerRequest: 2,
      retryStrategy: (times) => (times > 3 ? null : Math.min(times * 200, 1000)),
      // Keep ioredis from logging its own unhandled-error lines with the URL.
      showFriendlyErrorStack: false,
    },
  });
  let lastError: Error | undefined;
  redis.on("error", (e: Error) => {
    lastError = e;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    // "Connection is closed" says little: the socket's own error says why.
    const reason = (lastError ?? (e as Error)).message;
    throw new CommandError(`cannot connect to Redis at ${maskUrl(url)}: ${scrub(reason, url)}`);
  }
  return redis;
}

/** Opens the API on `url`: connects and PINGs now, so a bad host or password fails here with its reason. */
export async function openApi(url: string, extra: Omit<ApiOptions, "redis"> = {}): Promise<SidekiqApi> {
  return new SidekiqApi({ ...extra, redis: await connectCli(url) });
}

/** Closes the API and its connection, quietly. */
export async function closeApi(api: SidekiqApi | undefined): Promise<void> {
  if (!api) return;
  await api.close().catch(() => undefined);
  api.redis.disconnect();
}

/**
 * The Redis of `--redis` (or REDIS_URL), noted for error scrubbing, opened as
 * the API for `body`, and closed after it whatever happens.
 */
export async function withApi<T>(
  redisFlag: string | undefined,
  setUrl: (url: string) => void,
  extra: Omit<ApiOptions, "redis">,
  body: (api: SidekiqApi) => Promise<T>,
): Promise<T> {
  const url = redisUrl(redisFlag);
  setUrl(url);
  let api: SidekiqApi | undefined;
  try {
    api = await openApi(url, extra);
    return await body(api);
  } finally {
    await closeApi(api);
  }
}

/** --api-version of a command that reads latencies. */
export const API_VERSION_FLAG = {
  value: "V",
  help: "latency as this Sidekiq release's API computes it (default 8.1.7)",
  parse: version,
} as const;

/** --dialect and --fallback of a command that pushes (`when`: the action they serve, "enqueue: "). */
export function pushFlags(when = "") {
  return {
    dialect: {
      value: "D",
      help: `${when}auto (default: what the live Ruby fleet reads), 6, 7, 8 or a version`,
      parse: dialect,
      default: "auto",
    },
    fallback: { value: "D", help: `${when}dialect when auto finds no live Ruby process`, parse: version },
  } as const;
}

/**
 * A client on `redis` that writes the format of --dialect, for `body`, closed
 * after it; auto finding no Ruby process to tell it is named by the flags
 * that settle it.
 */
export async function withClient<T>(
  redis: Redis,
  flags: { dialect: string; fallback: string | undefined },
  body: (client: Client) => Promise<T>,
): Promise<T> {
  const fallback = flags.fallback !== undefined ? { autoFallback: flags.fallback } : {};
  const client = new Client({ redis, dialect: flags.dialect, ...fallback });
  try {
    return await body(client);
  } catch (e) {
    if (!(e instanceof DialectDetectionError)) throw e;
    throw new CommandError(
      `no live Ruby Sidekiq process tells which format to write: pass --dialect 6|7|8 (or --fallback) — ${e.message}`,
    );
  } finally {
    await client.close();
  }
}
