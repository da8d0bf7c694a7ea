// One way for a command to reach Redis: connect and PING now, so a bad host
// or password fails at once with its reason (never the password), then the
// API on that connection, closed whatever happens.
import type { Redis } from "ioredis";
import { type ApiOptions, SidekiqApi } from "../../core/api/sidekiq-api.js";
import { connectRedis } from "../../core/redis/connection.js";
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
