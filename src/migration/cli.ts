// What the migrate, export and import commands share: strict flag parsing
// (usage errors exit 2), the Redis URL from --redis or REDIS_URL with its
// credentials kept out of every message, a connection that fails fast, and
// the error-to-exit-code mapping (1 for failures).
import { parseArgs, type ParseArgsConfig } from "node:util";
import { Redis } from "ioredis";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0";

export class UsageError extends Error {
  override name = "UsageError";
}

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
    if (String((e as NodeJS.ErrnoException).code ?? "").startsWith("ERR_PARSE_ARGS")) throw new UsageError((e as Error).message);
    throw e;
  }
}

/**
 * The URL without its userinfo: `redis://***@host:6379/0`. Everything between
 * `://` and the last `@` is hidden, since a password may hold `/`, `#` or `@`.
 */
export function maskRedisUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(url);
  if (!m) return url.includes("@") ? `***@${url.slice(url.lastIndexOf("@") + 1)}` : url;
  const rest = m[2]!;
  const at = rest.lastIndexOf("@");
  return at < 0 ? url : `${m[1]}***@${rest.slice(at + 1)}`;
}

/** Removes the URL's secrets (userinfo, password, decoded password) from a text. */
export function scrub(text: string, url: string | undefined): string {
  if (!url) return text;
  const m = /^[a-z][a-z0-9+.-]*:\/\/(.*)@/is.exec(url);
  let out = text.split(url).join(maskRedisUrl(url));
  if (!m) return out;
  const userinfo = m[1]!;
  const secrets = new Set([userinfo]);
  const colon = userinfo.indexOf(":");
  if (colon >= 0) {
    const pass = userinfo.slice(colon + 1);
    secrets.add(pass);
    try {
      secrets.add(decodeURIComponent(pass));
    } catch {
      // not percent-encoded
    }
  }
  for (const s of [...secrets].filter((x) => x.length >= 3).sort((a, b) => b.length - a.length)) out = out.split(s).join("***");
  return out;
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
export async function runCli(command: string, url: () => string | undefined, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    const msg = scrub((e as Error).message ?? String(e), url());
    if (e instanceof UsageError) {
      process.stderr.write(`sidekiq-bridge ${command}: ${msg}\nRun sidekiq-bridge ${command} --help for its options.\n`);
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
