// The Cron and Locks tabs over HTTP on a throwaway redis-server: what they
// list, hostile names escaped, the actions with the CSRF token (and refused
// without it or in read-only mode), and paging that never reads the whole set.
import type { Redis } from "ioredis";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CronApi } from "../../src/addons/sidekiq-cron/cron-api.js";
import { extensionSettings } from "../../src/tools/web/handler.js";
import { createWebHandler } from "../../src/assembly/web.js";
import { webTabs } from "../../src/assembly/registry.js";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();
const { serve } = web;
let redis: Redis;

async function session(url: string): Promise<{ cookie: string; token: string; body: string; status: number }> {
  const res = await fetch(url);
  const body = await res.text();
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  const token = /name="authenticity_token" value="([^"]+)"/.exec(body)?.[1] ?? "";
  return { cookie, token, body, status: res.status };
}

function post(base: string, path: string, s: { cookie: string; token: string }, form: Record<string, string> = {}) {
  return fetch(`${base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: s.cookie, origin: base },
    body: new URLSearchParams({ authenticity_token: s.token, ...form }).toString(),
  });
}

const HOSTILE = `<img src=x onerror=alert(1)>"'&`;

beforeAll(() => {
  redis = web.redis;
});

beforeEach(async () => {
  await redis.flushdb();
});

function cron(): CronApi {
  return new CronApi({ redis });
}

describe("Cron tab", () => {
  it("shows an empty state and the default namespace when there are no cron jobs", async () => {
    const base = await serve();
    const { body, status } = await session(`${base}/cron`);
    expect(status).toBe(200);
    expect(body).toContain('<a href="/cron">Cron</a>');
    expect(body).toContain("No cron jobs were found");
    expect(body).toMatch(/<span class="count">0<\/span><span class="desc">default<\/span>/);
  });

  it("lists each namespace's jobs with status, cron, class, queue and next fire time, escaped", async () => {
    await cron().create({ name: "nightly", cron: "0 3 * * *", class: "NightlyJob", queue: "low", args: [1] });
    await cron().create({ name: HOSTILE, cron: "*/5 * * * *", class: HOSTILE, status: "disabled" });
    await cron().create({ name: "other-ns", cron: "0 * * * *", class: "HourlyJob", namespace: "billing" });
    const base = await serve();
    const { body } = await session(`${base}/cron`);
    expect(body).toContain('data-cron-job="nightly" data-status="enabled"');
    expect(body).toContain("<code>0\u00a03\u00a0*\u00a0*\u00a0*</code>");
    expect(body).toContain("NightlyJob");
    expect(body).toContain("<td>low</td>");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain("&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;");
    expect(body).not.toContain("other-ns");
    // Enabled jobs first (Ruby's sort_name); a disabled one has no next fire time but a Delete button.
    expect(body.indexOf('data-cron-job="nightly"')).toBeLessThan(body.indexOf('data-status="disabled"'));
    expect(body).toMatch(/<span class="count">1<\/span><span class="desc">billing<\/span>/);
    const billing = await session(`${base}/cron/namespaces/billing`);
    expect(billing.body).toContain('data-cron-job="other-ns"');
    const detail = await session(`${base}/cron/namespaces/default/jobs/${encodeURIComponent(HOSTILE)}`);
    expect(detail.status).toBe(200);
    expect(detail.body).not.toContain("<img src=x");
    expect(detail.body).toContain("No history was found");
  });

  it("disables, enables, enqueues and deletes one job, and acts on all", async () => {
    await cron().create({ name: "a/b c", cron: "0 3 * * *", class: "NightlyJob", queue: "low" });
    await cron().create({ name: "second", cron: "0 4 * * *", class: "OtherJob" });
    const base = await serve();
    const s = await session(`${base}/cron`);
    const job = `/cron/namespaces/default/jobs/${encodeURIComponent("a/b c")}`;
    expect(s.body).toContain(`action="${job}/disable"`);
    expect((await post(base, `${job}/disable`, { ...s, token: "bad" })).status).toBe(403);
    expect((await cron().find("a/b c"))!.status).toBe("enabled");
    const r = await post(base, `${job}/disable`, s, { back: "job" });
    expect(r.status).toBe(303);
    expect(r.headers.get("location")).toBe(job);
    expect((await cron().find("a/b c"))!.status).toBe("disabled");
    await post(base, `${job}/enable`, s);
    expect((await cron().find("a/b c"))!.status).toBe("enabled");
    expect((await post(base, `${job}/enqueue`, s)).status).toBe(303);
    expect(await redis.llen("queue:low")).toBe(1);
    const history = await cron().jidHistory("a/b c");
    expect(history).toHaveLength(1);
    const detail = await session(`${base}${job}`);
    expect(detail.body).toContain(history[0]!.jid!);
    expect((await post(base, "/cron/namespaces/default/all/disable", s)).status).toBe(303);
    expect((await cron().all()).map((j) => j.status)).toEqual(["disabled", "disabled"]);
    expect((await post(base, `${job}/delete`, s)).headers.get("location")).toBe("/cron/namespaces/default");
    expect(await cron().find("a/b c")).toBeUndefined();
    expect((await post(base, "/cron/namespaces/default/all/delete", s)).status).toBe(303);
    expect(await cron().count()).toBe(0);
    expect((await post(base, "/cron/namespaces/default/all/explode", s)).status).toBe(400);
  });

  it("with the namespaces given, lists those and default without scanning for others", async () => {
    await cron().create({ name: "a", cron: "0 * * * *", class: "A", namespace: "billing" });
    await cron().create({ name: "b", cron: "0 * * * *", class: "B", namespace: "hidden" });
    const base = await serve({ extensions: { cron: { namespaces: ["billing", "empty"] } } });
    const { body } = await session(`${base}/cron`);
    const cards = /id="cron-namespaces">([\s\S]*?)<\/div>/.exec(body)![1]!;
    const shown = [...cards.matchAll(/<span class="desc">([^<]+)<\/span>/g)].map((m) => m[1]);
    expect(shown).toEqual(["billing", "default", "empty"]);
  });

  it("read-only: no buttons and the POSTs refused", async () => {
    await cron().create({ name: "nightly", cron: "0 3 * * *", class: "NightlyJob" });
    const base = await serve({ readOnly: true });
    const s = await session(`${base}/cron`);
    expect(s.body).not.toContain('method="post"');
    expect((await post(base, "/cron/namespaces/default/jobs/nightly/disable", s)).status).toBe(403);
    expect((await cron().find("nightly"))!.status).toBe("enabled");
  });
});

async function lock(digest: string, jid: string, at: number, info?: Record<string, unknown>): Promise<void> {
  await redis.zadd("uniquejobs:digests", String(at), digest);
  await redis.hset(`${digest}:LOCKED`, jid, String(at));
  await redis.lpush(`${digest}:QUEUED`, jid);
  if (info) await redis.set(`${digest}:INFO`, JSON.stringify(info));
  await redis.zadd(
    "uniquejobs:changelog",
    String(at),
    JSON.stringify({ digest, job_id: jid, script: "lock.lua", message: "Locked", time: at }),
  );
}

describe("Locks tab", () => {
  it("lists digests newest first a page at a time, with the lock type and jid count", async () => {
    const now = Date.now() / 1000;
    for (let i = 0; i < 30; i++) await lock(`uniquejobs:d${String(i).padStart(2, "0")}`, `jid${i}`, now - 100 + i);
    await lock("uniquejobs:info", "jidX", now, { type: "until_executed", worker: "UniqueJob", lock_args: [1] });
    const base = await serve();
    const first = await session(`${base}/locks?count=10`);
    expect(first.body).toContain("31 digests");
    const digests = [...first.body.matchAll(/data-digest="([^"]+)"/g)].map((m) => m[1]);
    expect(digests).toEqual([
      "uniquejobs:info",
      ...Array.from({ length: 9 }, (_, i) => `uniquejobs:d${String(29 - i).padStart(2, "0")}`),
    ]);
    expect(first.body).toContain("<td>until_executed</td>");
    const last = await session(`${base}/locks?count=10&page=4`);
    expect([...last.body.matchAll(/data-digest="([^"]+)"/g)].map((m) => m[1])).toEqual(["uniquejobs:d00"]);
  });

  it("filters by text (glob characters taken literally) and pages matches by cursor", async () => {
    const now = Date.now() / 1000;
    for (let i = 0; i < 300; i++) await redis.zadd("uniquejobs:digests", String(now), `uniquejobs:x${i}`);
    await lock("uniquejobs:needle*1", "j1", now);
    await lock("uniquejobs:needleA1", "j2", now);
    const base = await serve();
    const one = await session(`${base}/locks?filter=${encodeURIComponent("needle*")}`);
    expect([...one.body.matchAll(/data-digest="([^"]+)"/g)].map((m) => m[1])).toEqual(["uniquejobs:needle*1"]);
    const many = await session(`${base}/locks?filter=x1&count=5`);
    const shown = [...many.body.matchAll(/data-digest="([^"]+)"/g)].map((m) => m[1]);
    expect(shown.length).toBeGreaterThanOrEqual(5);
    expect(shown.every((d) => d!.includes("x1"))).toBe(true);
  });

  it("shows one lock's keys and changelog, escaped", async () => {
    const digest = `uniquejobs:${HOSTILE}`;
    await lock(digest, "jid-1", Date.now() / 1000, { type: "until_executed", worker: HOSTILE, queue: "default" });
    const base = await serve();
    const { body, status } = await session(`${base}/locks/${encodeURIComponent(digest)}`);
    expect(status).toBe(200);
    expect(body).not.toContain("<img src=x");
    expect(body).toContain('data-jid="jid-1"');
    expect(body).toContain("lock.lua");
    expect(body).toContain("Queued: <code>jid-1</code>");
    const list = await session(`${base}/locks`);
    expect(list.body).not.toContain("<img src=x");
    const logs = await session(`${base}/locks/changelogs`);
    expect(logs.body).toContain("1 entries");
    expect(logs.body).toContain("Locked");
  });

  it("deletes one lock (its keys and both digest sets) and all locks, only by POST with the token", async () => {
    const now = Date.now() / 1000;
    await lock("uniquejobs:one", "j1", now);
    await lock("uniquejobs:two", "j2", now);
    await redis.zadd("uniquejobs:expiring_digests", String(now + 60), "uniquejobs:one");
    const base = await serve();
    const s = await session(`${base}/locks`);
    expect((await fetch(`${base}/locks/uniquejobs%3Aone/delete`)).status).toBe(405);
    expect((await post(base, "/locks/uniquejobs%3Aone/delete", { ...s, token: "x" })).status).toBe(403);
    const r = await post(base, "/locks/uniquejobs%3Aone/delete", s);
    expect(r.status).toBe(303);
    expect(await redis.zrange("uniquejobs:digests", 0, -1)).toEqual(["uniquejobs:two"]);
    expect(await redis.zcard("uniquejobs:expiring_digests")).toBe(0);
    expect(await redis.exists("uniquejobs:one:LOCKED", "uniquejobs:one:QUEUED")).toBe(0);
    expect((await post(base, "/locks/delete-all", s)).status).toBe(303);
    expect(await redis.zcard("uniquejobs:digests")).toBe(0);
    expect(await redis.exists("uniquejobs:two:LOCKED")).toBe(0);
    expect((await post(base, "/locks/changelogs/delete-all", s)).status).toBe(303);
    expect(await redis.exists("uniquejobs:changelog")).toBe(0);
  });

  it("gem 9: deletes the :LOCKED hash and the digest", async () => {
    await redis.zadd("uniquejobs:digests", String(Date.now()), "uniquejobs:v9");
    await redis.hset("uniquejobs:v9:LOCKED", "j9", JSON.stringify({ type: "until_executed" }));
    const base = await serve({ extensions: { uniqueJobs: { gem: 9 } } });
    const s = await session(`${base}/locks/uniquejobs%3Av9`);
    expect(s.body).toContain('data-jid="j9"');
    expect((await post(base, "/locks/uniquejobs%3Av9/delete", s)).status).toBe(303);
    expect(await redis.exists("uniquejobs:v9:LOCKED")).toBe(0);
    expect(await redis.zcard("uniquejobs:digests")).toBe(0);
  });

  it("read-only: no Delete buttons and the POSTs refused", async () => {
    await lock("uniquejobs:one", "j1", Date.now() / 1000);
    const base = await serve({ readOnly: true });
    const s = await session(`${base}/locks`);
    expect(s.body).not.toContain('method="post"');
    expect((await post(base, "/locks/delete-all", s)).status).toBe(403);
    expect(await redis.zcard("uniquejobs:digests")).toBe(1);
  });
});

describe("extension options", () => {
  it("are refused at once when no extension has the name, or the tab refuses the value", () => {
    const redis = "redis://127.0.0.1:1";
    expect(() => createWebHandler({ redis, extensions: { crons: {} } })).toThrow(
      /no dashboard extension is named "crons" \(extensions: .*cron.*uniqueJobs/,
    );
    expect(() => createWebHandler({ redis, extensions: { cron: { namespaces: "default" } } })).toThrow(
      /the Cron tab takes \{ namespaces\?: string\[\] \}/,
    );
  });

  it("the names of earlier releases still reach their tabs", () => {
    expect(
      Object.fromEntries(extensionSettings({ cronNamespaces: ["billing"], uniqueJobs: { gem: 9 } }, webTabs())),
    ).toMatchObject({
      cron: { namespaces: ["billing"] },
      uniqueJobs: { gem: 9 },
    });
  });
});
