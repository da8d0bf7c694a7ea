// The handler over HTTP on a throwaway redis-server (no Ruby, no browser):
// security headers, CSRF and Origin checks, no action on a GET, read-only,
// authorize, the base path, and escaping of hostile stored values.
import type { Redis } from "ioredis";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();
const { serve } = web;
let redis: Redis;

/** GETs a page and returns what a form needs: the cookie and the token. */
async function session(url: string): Promise<{ cookie: string; token: string; body: string }> {
  const res = await fetch(url);
  const body = await res.text();
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const token = /name="authenticity_token" value="([^"]+)"/.exec(body)?.[1] ?? "";
  return { cookie, token, body };
}

function post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

beforeAll(() => {
  redis = web.redis;
});

beforeEach(async () => {
  await redis.flushdb();
  await redis.zadd(
    "retry",
    "1900000000.25",
    JSON.stringify({ class: "HardJob", args: [1], jid: "j1", queue: "default", error_message: "boom" }),
  );
});

describe("web handler", () => {
  it("serves every page with a strict CSP and no inline script", async () => {
    const base = await serve();
    for (const p of ["/", "/busy", "/queues", "/retries", "/scheduled", "/morgue", "/metrics", "/metrics/HardJob"]) {
      const res = await fetch(`${base}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("content-security-policy")).toMatch(/default-src 'none'; script-src 'self'/);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      const body = await res.text();
      expect(body).not.toMatch(/<script>|<script [^>]*>[^<]|\son[a-z]+=|style=/i);
    }
    expect((await fetch(`${base}/assets/dashboard.js`)).headers.get("content-type")).toContain("javascript");
  });

  it("acts on a POST with the token, and refuses one without it or from another origin", async () => {
    const base = await serve();
    const { cookie, token } = await session(`${base}/retries`);
    expect((await post(`${base}/retries/all`, { action: "delete" }, { cookie })).status).toBe(403);
    expect((await post(`${base}/retries/all`, { action: "delete", authenticity_token: "x" }, { cookie })).status).toBe(
      403,
    );
    const foreign = await post(
      `${base}/retries/all`,
      { action: "delete", authenticity_token: token },
      { cookie, origin: "http://evil.example" },
    );
    expect(foreign.status).toBe(403);
    expect(await redis.zcard("retry")).toBe(1);
    const ok = await post(
      `${base}/retries/selected`,
      { action: "delete", key: "1900000000.25-j1", authenticity_token: token },
      { cookie, origin: base },
    );
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/retries");
    expect(await redis.zcard("retry")).toBe(0);
  });

  it("does nothing on a GET: action URLs answer 405", async () => {
    const base = await serve();
    const res = await fetch(`${base}/queues/default/clear`);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("read-only: no forms, every POST refused", async () => {
    const base = await serve({ readOnly: true });
    const { cookie, token, body } = await session(`${base}/retries`);
    expect(body).not.toContain('method="post"');
    const res = await post(`${base}/retries/all`, { action: "delete", authenticity_token: token }, { cookie });
    expect(res.status).toBe(403);
    expect(await redis.zcard("retry")).toBe(1);
  });

  it("authorize: anything but true, or a throw, is 403", async () => {
    for (const authorize of [() => false, () => Promise.reject(new Error("no")), () => "yes" as unknown as boolean]) {
      const base = await serve({ authorize });
      expect((await fetch(`${base}/`)).status).toBe(403);
    }
    const base = await serve({ authorize: (req) => req.headers["x-admin"] === "1" });
    expect((await fetch(`${base}/`, { headers: { "x-admin": "1" } })).status).toBe(200);
  });

  it("under a base path: links carry it, other paths go to next()", async () => {
    const base = await serve({ basePath: "/sidekiq/" });
    const { body } = await session(`${base}/sidekiq`);
    expect(body).toContain('href="/sidekiq/retries"');
    expect(body).toContain('href="/sidekiq/assets/dashboard.css"');
    const other = await fetch(`${base}/elsewhere`);
    expect(other.status).toBe(418);
  });

  it("escapes hostile values and cuts a 10 MB argument", async () => {
    const base = await serve();
    const queue = `<script>alert("q")</script>`;
    await redis.sadd("queues", queue);
    await redis.lpush(
      `queue:${queue}`,
      JSON.stringify({ class: `"><img src=x onerror=alert(1)>`, args: ["y".repeat(10_000_000)], jid: "evil", queue }),
    );
    const list = await (await fetch(`${base}/queues`)).text();
    expect(list).not.toContain("<script>alert");
    expect(list).toContain("&lt;script&gt;alert(&quot;q&quot;)&lt;/script&gt;");
    const page = await (await fetch(`${base}/queues/${encodeURIComponent(queue)}`)).text();
    expect(page).not.toContain("<img");
    expect(page).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;");
    expect(page).toContain("more characters)");
    expect(page.length).toBeLessThan(100_000);
  }, 30_000); // a 10 MB body: seconds on a loaded machine, not a timing check

  it("pages through a queue and a sorted set with LRANGE / ZREVRANGE offsets", async () => {
    const base = await serve();
    const pipe = redis.pipeline();
    for (let i = 0; i < 60; i++) {
      pipe.lpush("queue:big", JSON.stringify({ class: "J", args: [i], jid: `q${i}`, queue: "big" }));
      pipe.zadd(
        "dead",
        String(1_800_000_000 + i),
        JSON.stringify({ class: "J", args: [i], jid: `d${i}`, queue: "big" }),
      );
    }
    pipe.sadd("queues", "big");
    await pipe.exec();
    const jids = (body: string) => [...body.matchAll(/<tr data-jid="([^"]*)"/g)].map((m) => m[1]);
    // Newest first: LPUSH puts q59 at the head; the highest score is d59.
    const q2 = await (await fetch(`${base}/queues/big?page=2&count=25`)).text();
    expect(jids(q2)).toEqual(Array.from({ length: 25 }, (_, i) => `q${34 - i}`));
    expect(q2).toContain('href="/queues/big?page=3"');
    const q3 = await (await fetch(`${base}/queues/big?page=3&count=25`)).text();
    expect(jids(q3)).toEqual(Array.from({ length: 10 }, (_, i) => `q${9 - i}`));
    const d1 = await (await fetch(`${base}/morgue`)).text();
    expect(jids(d1)).toEqual(Array.from({ length: 25 }, (_, i) => `d${59 - i}`));
    const filtered = await (await fetch(`${base}/morgue?substr=${encodeURIComponent('"args":[1')}`)).text();
    expect(jids(filtered)).toEqual(["d19", "d18", "d17", "d16", "d15", "d14", "d13", "d12", "d11", "d10", "d1"]);
  });

  it("Kill All, Retry All and a text-filtered Delete All move every job they name", async () => {
    const base = await serve();
    for (let i = 0; i < 3; i++)
      await redis.zadd(
        "retry",
        String(1_900_000_100 + i),
        JSON.stringify({
          class: i === 2 ? "OtherJob" : "HardJob",
          args: [i],
          jid: `k${i}`,
          queue: "q",
          retry_count: 1,
        }),
      );
    const { cookie, token } = await session(`${base}/retries`);
    const act = (path: string, form: Record<string, string>) =>
      post(`${base}${path}`, { authenticity_token: token, ...form }, { cookie, origin: base });
    // Text filter: only the members whose stored text holds "OtherJob".
    expect((await act("/retries/all", { action: "delete", substr: "OtherJob" })).status).toBe(303);
    expect(await redis.zrange("retry", 0, -1)).not.toContain(expect.stringContaining("OtherJob"));
    expect(await redis.zcard("retry")).toBe(3); // j1 from beforeEach, k0, k1
    expect((await act("/retries/all", { action: "kill" })).status).toBe(303);
    expect([await redis.zcard("retry"), await redis.zcard("dead")]).toEqual([0, 3]);
    expect((await act("/morgue/all", { action: "retry" })).status).toBe(303);
    expect(await redis.zcard("dead")).toBe(0);
    expect((await redis.llen("queue:q")) + (await redis.llen("queue:default"))).toBe(3);
    // Retry Now decrements retry_count, as Sidekiq's SortedEntry#retry.
    const k0 = (await redis.lrange("queue:q", 0, -1)).map((j) => JSON.parse(j)).find((j) => j.jid === "k0");
    expect(k0.retry_count).toBe(0);
  });
});
