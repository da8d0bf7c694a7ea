// What the API commands share: flag parsing (node:util parseArgs, strict),
// the Redis URL (--redis, REDIS_URL, default) with its userinfo masked in
// every message, one connection that fails fast with a clear reason, JSON and
// table output, and the exit codes: 0 ok, 1 failure, 2 usage error.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { SidekiqApi, type ApiOptions } from "../api/sidekiq-api.js";
import { connectRedis } from "../redis/connection.js";
import type { JobView } from "../api/job-entry.js";
import type { JobRecord } from "../wire/job-record.js";
import { RawJson, toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { decodePayloadTime } from "../wire/timestamps.js";
import { profileFor } from "../wire/dialect.js";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0";

/** Bad flags or arguments: exit code 2, with a pointer to --help. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** A failure to report as is (exit code 1). */
export class CommandError extends Error {
  override name = "CommandError";
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Flags every API command takes. */
export const COMMON_OPTIONS = {
  redis: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

export const COMMON_HELP = `      --redis URL             Redis URL (default: $REDIS_URL or ${DEFAULT_REDIS_URL})
      --json                  machine output: one JSON document on stdout
  -h, --help                  this help`;

/** parseArgs (strict unless said otherwise), with its errors turned into UsageErrors. */
export function parseFlags<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs<T>({ strict: true, ...config });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "";
    if (code.startsWith("ERR_PARSE_ARGS")) throw new UsageError((e as Error).message);
    throw e;
  }
}

/**
 * The URL with its userinfo (user and password) replaced by `***`. Works on
 * text that does not parse as a URL too: everything between `://` and the
 * last `@` of the authority is hidden.
 */
export function maskUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(url);
  if (!m) return url.includes("@") ? `***@${url.slice(url.lastIndexOf("@") + 1)}` : url;
  const rest = m[2]!;
  // The last "@": a password may hold an unescaped "/", "#" or "@" that a URL parser would misread.
  const at = rest.lastIndexOf("@");
  if (at < 0) return url;
  return `${m[1]}***@${rest.slice(at + 1)}`;
}

/** The secrets a URL carries (userinfo, password, decoded password), longest first. */
export function urlSecrets(url: string): string[] {
  const m = /^[a-z][a-z0-9+.-]*:\/\/(.*)@/is.exec(url); // greedy: up to the last "@"
  if (!m) return [];
  const userinfo = m[1]!;
  const out = new Set<string>([userinfo]);
  const colon = userinfo.indexOf(":");
  if (colon >= 0) {
    const pass = userinfo.slice(colon + 1);
    out.add(pass);
    try {
      out.add(decodeURIComponent(pass));
    } catch {
      // not percent-encoded
    }
  }
  return [...out].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length);
}

/** Removes the URL and any of its secrets from a message. */
export function scrub(text: string, url: string | undefined): string {
  if (!url) return text;
  let out = text.split(url).join(maskUrl(url));
  for (const s of urlSecrets(url)) out = out.split(s).join("***");
  return out;
}

/** --redis, else REDIS_URL, else the default; checked to be a redis:// or rediss:// URL. */
export function redisUrl(flag: string | undefined): string {
  const url = flag ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `not a Redis URL: ${maskUrl(url)} (expected redis://[user:password@]host[:port][/db] or rediss://…)`,
    );
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new UsageError(
      `not a Redis URL: ${maskUrl(url)} (the scheme must be redis:// or rediss://, not ${parsed.protocol}//)`,
    );
  }
  if (parsed.pathname.length > 1 && !/^\/\d+$/.test(parsed.pathname)) {
    throw new UsageError(`not a Redis URL: ${maskUrl(url)} (the path must be a database number, e.g. /0)`);
  }
  return url;
}

/** Opens the API on `url`: connects and PINGs now, so a bad host or password fails here with its reason. */
export async function openApi(url: string, extra: Omit<ApiOptions, "redis"> = {}): Promise<SidekiqApi> {
  const { redis } = connectRedis({
    url,
    ioredis: {
      lazyConnect: true,
      connectTimeout: 5000,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
      enableOfflineQueue: true,
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
    const reason = (lastError ?? (e as Error)).message;
    throw new CommandError(`cannot connect to Redis at ${maskUrl(url)}: ${scrub(reason, url)}`);
  }
  return new SidekiqApi({ ...extra, redis });
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

/**
 * Runs a command body with Ruby-like exit codes: a UsageError prints the
 * message and `Run 'sidekiq-bridge <cmd> --help'` (2), any other error its
 * message with the Redis URL masked (1).
 */
export async function runCommand(
  name: string,
  body: (ctx: { setUrl(u: string): void }) => Promise<number>,
): Promise<number> {
  let url: string | undefined;
  try {
    return await body({ setUrl: (u) => void (url = u) });
  } catch (e) {
    const msg = scrub(e instanceof Error ? e.message : String(e), url);
    if (e instanceof UsageError) {
      process.stderr.write(`sidekiq-bridge ${name}: ${msg}\nRun 'sidekiq-bridge ${name} --help' for usage.\n`);
      return 2;
    }
    process.stderr.write(`sidekiq-bridge ${name}: ${msg}\n`);
    return 1;
  }
}

/** One JSON document on stdout (Ruby-style JSON: bigints exact, RawJson spliced verbatim). */
export function printJson(value: RubyJsonValue): void {
  process.stdout.write(`${toRubyJson(value)}\n`);
}

/** An aligned table: columns padded to the widest cell; `right` columns right-aligned. */
export function formatTable(headers: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) =>
        i === cells.length - 1 && !right.has(i) ? c : right.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!),
      )
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export function printTable(headers: string[], rows: string[][], right?: ReadonlySet<number>): void {
  process.stdout.write(`${formatTable(headers, rows, right)}\n`);
}

/** A duration in seconds as `42s`, `5m 03s`, `2h 07m`, `3d 04h`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "-";
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  let out: string;
  if (s < 60) out = s < 10 && s % 1 !== 0 ? `${s.toFixed(2)}s` : `${Math.floor(s)}s`;
  else if ((s = Math.floor(s)) < 3600) out = `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  else if (s < 86400) out = `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  else out = `${Math.floor(s / 86400)}d ${String(Math.floor((s % 86400) / 3600)).padStart(2, "0")}h`;
  return neg ? `-${out}` : out;
}

/** Epoch seconds as ISO 8601 (UTC), or "-". */
export function isoSeconds(s: number | undefined): string {
  if (s === undefined || !Number.isFinite(s)) return "-";
  try {
    return new Date(s * 1000).toISOString();
  } catch {
    return "-";
  }
}

/** Cuts a cell to `n` characters with an ellipsis. */
export function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, Math.max(0, n - 1))}…`;
}

/** A non-negative integer flag. */
export function intFlag(name: string, v: string | undefined, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${v}"`);
  return Number(v);
}

/** A payload time member (float seconds or integer ms, by lexeme) as epoch seconds. */
export function payloadSeconds(rec: JobRecord | null, key: string): number | undefined {
  const raw = rec?.raw(key);
  if (raw === undefined || !/^-?\d/.test(raw)) return undefined;
  return decodePayloadTime(raw) / 1000;
}

/** A job for --json output: the usual fields, then the stored payload verbatim under "job". */
export function jobJson(v: JobView): { [key: string]: RubyJsonValue } {
  const rec = v.record;
  const out: { [key: string]: RubyJsonValue } = {
    jid: v.jid ?? null,
    class: v.displayClass ?? null,
    queue: v.queue ?? null,
  };
  if (v.klass !== undefined && v.klass !== v.displayClass) out.wrapper = v.klass;
  for (const k of ["created_at", "enqueued_at", "failed_at", "retried_at"]) {
    const s = payloadSeconds(rec, k);
    if (s !== undefined) out[k] = s;
  }
  if (rec) {
    for (const k of ["retry_count", "error_class", "error_message"]) {
      const raw = rec.raw(k);
      if (raw !== undefined) out[k] = new RawJson(raw);
    }
  }
  // The stored string itself: spliced in as JSON when it is an object, else as a string.
  out.job = rec ? new RawJson(v.raw) : v.raw;
  return out;
}

/** A one-line preview of a job's arguments (the stored `args` text). */
export function argsPreview(v: JobView, n = 60): string {
  const raw = v.record?.raw("args");
  return clip(raw ?? (v.record ? "-" : `invalid JSON: ${v.raw}`), n);
}

/** --api-version: a Sidekiq version or dialect whose API rules to follow. */
export function apiVersionFlag(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    profileFor(v);
  } catch (e) {
    throw new UsageError(`--api-version: ${(e as Error).message}`);
  }
  return v;
}
