// Cross-site request forgery protection for the dashboard's POST actions:
// a random per-browser id in an HttpOnly, SameSite=Strict cookie, and a form
// token that is its HMAC under a per-handler secret (so a page from another
// origin can neither read nor forge it). Every POST must carry the token and,
// when the browser sends one, an Origin (or Referer) of this host.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

export const CSRF_COOKIE = "sidekiq_bridge_csrf";
export const CSRF_FIELD = "authenticity_token";

export function newSecret(): Buffer {
  return randomBytes(32);
}

export function newBrowserId(): string {
  return randomBytes(18).toString("base64url");
}

/** The form token for a browser id. */
export function tokenFor(secret: Buffer, browserId: string): string {
  return createHmac("sha256", secret).update(browserId).digest("base64url");
}

/** Constant-time check of a submitted token against the browser id. */
export function validToken(secret: Buffer, browserId: string | undefined, token: string | undefined): boolean {
  if (!browserId || !token) return false;
  const want = Buffer.from(tokenFor(secret, browserId));
  const got = Buffer.from(token);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** The cookies of a request (last one wins, values undecoded beyond %XX). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    try {
      out[k] = decodeURIComponent(v);
    } catch {
      out[k] = v;
    }
  }
  return out;
}

/**
 * The Origin check: the request's Origin header (or, without one, its
 * Referer) must name the host the request was sent to. A request with neither
 * passes (non-browser clients); the CSRF token still has to match.
 */
export function sameOrigin(req: Pick<IncomingMessage, "headers">): boolean {
  const host = req.headers.host;
  const origin = req.headers.origin ?? req.headers.referer;
  if (origin === undefined) return true;
  if (origin === "null" || !host) return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
