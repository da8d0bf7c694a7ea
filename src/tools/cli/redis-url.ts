// The Redis URL of a command (--redis, else REDIS_URL, else the default) and
// how its secrets stay out of every message the CLI prints.
import { UsageError } from "./errors.js";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0";

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
