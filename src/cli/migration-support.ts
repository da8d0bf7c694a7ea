// What the migrate, export and import commands share (beyond common.ts): strict flag parsing
// (usage errors exit 2), the Redis URL from --redis or REDIS_URL with its
// credentials kept out of every message, a connection that fails fast, and
// the error-to-exit-code mapping (1 for failures).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Redis } from "ioredis";

import { DEFAULT_REDIS_URL, maskUrl, scrub, UsageError } from "./common.js";

// Shared with the other commands (one UsageError class, one way to hide secrets).
export { DEFAULT_REDIS_URL, scrub, UsageError };
export const maskRedisUrl = maskUrl;

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface ParsedFlags {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
}

/** parseArgs, strict; its complaints become UsageErrors. */
export function parseFlags(argv: string[], options: Options, allowPositionals = false): ParsedFlags {
  try {
    const r = parseArgs({ args: argv, options, strict: true, allowPositionals });
    return { values: r.values as ParsedFlags["values"], positionals: r.positionals };
  } catch (e) {
    if (String((e as NodeJS.ErrnoException).code ?? "").startsWith("ERR_PARSE_ARGS"))
      throw new UsageError((e as Error).message);
    throw e;
  }
}

export function redisUrlFrom(flag: unknown): string {
  return typeof flag === "string" && flag !== "" ? flag : process.env.REDIS_URL || DEFAULT_REDIS_URL;
}

/** Connects, or fails within a few seconds with the reason (never the password). */
export async function connectCli(url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5000,
    maxRetriesPerRequest: 2,
    retryStrategy: (times) => (times > 3 ? null : Math.min(times * 200, 1000)),
    // Keep ioredis from logging its own unhandled-error lines with the URL.
    showFriendlyErrorStack: false,
  });
  let last: Error | undefined;
  redis.on("error", (e: Error) => (last = e));
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    // "Connection is closed" says little: the socket's own error says why.
    const why = last && /Connection is closed/.test((e as Error).message) ? last : (e as Error);
    throw new Error(`cannot use Redis at ${maskRedisUrl(url)}: ${scrub(why.message, url)}`);
  }
  return redis;
}

/**
 * Runs a command body: usage errors print the message and the help hint and
 * return 2, other errors print the message (scrubbed) and return 1.
 */
export async function runCli(
  command: string,
  url: () => string | undefined,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (e) {
    const msg = scrub((e as Error).message ?? String(e), url());
    if (e instanceof UsageError) {
      process.stderr.write(
        `sidekiq-bridge ${command}: ${msg}\nRun sidekiq-bridge ${command} --help for its options.\n`,
      );
      return 2;
    }
    process.stderr.write(`sidekiq-bridge ${command}: ${msg}\n`);
    return 1;
  }
}

/** One JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
