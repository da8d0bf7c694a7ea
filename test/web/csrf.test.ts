import { describe, expect, it } from "vitest";
import { newBrowserId, newSecret, parseCookies, sameOrigin, tokenFor, validToken } from "../../src/tools/web/csrf.js";

describe("CSRF tokens", () => {
  it("accepts the token of the browser's own id, and nothing else", () => {
    const secret = newSecret();
    const id = newBrowserId();
    const token = tokenFor(secret, id);
    expect(validToken(secret, id, token)).toBe(true);
    expect(validToken(secret, newBrowserId(), token)).toBe(false);
    expect(validToken(newSecret(), id, token)).toBe(false);
    expect(validToken(secret, id, `${token}x`)).toBe(false);
    expect(validToken(secret, id, undefined)).toBe(false);
    expect(validToken(secret, undefined, token)).toBe(false);
    expect(validToken(secret, id, "")).toBe(false);
  });

  it("reads cookies", () => {
    expect(parseCookies("a=1; sidekiq_bridge_csrf=abc%3D; b")).toEqual({ a: "1", sidekiq_bridge_csrf: "abc=" });
    expect(parseCookies(undefined)).toEqual({});
  });

  it("checks Origin (or Referer) against Host", () => {
    const req = (h: Record<string, string>) => ({ headers: { host: "127.0.0.1:9292", ...h } });
    expect(sameOrigin(req({ origin: "http://127.0.0.1:9292" }))).toBe(true);
    expect(sameOrigin(req({ referer: "http://127.0.0.1:9292/retries?page=2" }))).toBe(true);
    expect(sameOrigin(req({}))).toBe(true); // no browser headers: the token still decides
    expect(sameOrigin(req({ origin: "http://evil.example" }))).toBe(false);
    expect(sameOrigin(req({ origin: "null" }))).toBe(false);
    expect(sameOrigin(req({ origin: "http://127.0.0.1:9293" }))).toBe(false);
    expect(sameOrigin(req({ origin: "not a url" }))).toBe(false);
  });
});
