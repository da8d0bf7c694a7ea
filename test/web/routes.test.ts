// The dashboard's routes: an action URL answers a GET (or HEAD) with 405 and
// `Allow: POST`, and changes nothing, even where a page's looser pattern
// (a job's key, a lock's digest) would also match its path; the pages next to
// those actions still answer 200. The URLs come from two places: one written
// out per POST route, and every form the dashboard itself draws on seeded data,
// so a new action shows up here without a line of its own.
import type { Redis } from "ioredis";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CronApi } from "../../src/addons/sidekiq-cron/cron-api.js";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();
let redis: Redis;

/** One URL for each POST route of the handler (src/tools/web/handler.ts, ROUTES). */
const ACTION_URLS = [
  "/retries/selected",
  "/retries/all",
  "/scheduled/selected",
  "/scheduled/all",
  "/morgue/selected",
  "/morgue/all",
  "/queues/default/clear",
  "/queues/default/delete",
  "/cron/namespaces/default/all/enqueue",
  "/cron/namespaces/default/all/enable",
  "/cron/namespaces/default/all/disable",
  "/cron/namespaces/default/all/delete",
  "/cron/namespaces/default/jobs/nightly/enqueue",
  "/cron/namespaces/default/jobs/nightly/enable",
  "/cron/namespaces/default/jobs/nightly/disable",
  "/cron/namespaces/default/jobs/nightly/delete",
  "/locks/delete-all",
  "/locks/changelogs/delete-all",
  "/locks/uniquejobs%3Aone/delete",
];

const RETRY = JSON.stringify({ class: "HardJob", args: [1], jid: "j1", queue: "default", error_message: "boom" });
const NOW = Math.floor(Date.now() / 1000);

/** Every key the seeded dashboard shows, as Redis holds it, to compare before and after. */
async function snapshot(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.keys("*")).sort()) {
    const type = await redis.type(key);
    out[key] =
      type === "zset"
        ? await redis.zrange(key, 0, -1, "WITHSCORES")
        : type === "list"
          ? await redis.lrange(key, 0, -1)
          : type === "hash"
            ? await redis.hgetall(key)
            : type === "set"
              ? (await redis.smembers(key)).sort()
              : await redis.get(key);
  }
  return out;
}

/** The pages of the seeded dashboard, followed from the root through its own links. */
async function crawl(base: string): Promise<{ pages: Map<string, number>; forms: Set<string> }> {
  const pages = new Map<string, number>();
  const forms = new Set<string>();
  const todo = ["/"];
  while (todo.length > 0 && pages.size < 200) {
    const path = todo.shift()!;
    if (pages.has(path)) continue;
    const res = await fetch(`${base}${path}`);
    const body = await res.text();
    pages.set(path, res.status);
    for (const m of body.matchAll(/<form method="post" action="([^"]+)"/g)) forms.add(unescape(m[1]!));
    for (const m of body.matchAll(/<a [^>]*href="(\/[^"?#]*)/g)) {
      const link = unescape(m[1]!);
      if (!link.startsWith("/assets/") && !pages.has(link)) todo.push(link);
    }
  }
  return { pages, forms };
}

/** The HTML escapes an attribute may hold. */
function unescape(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

beforeAll(() => {
  redis = web.redis;
});

beforeEach(async () => {
  await redis.flushdb();
  await redis.zadd("retry", "1900000000.25", RETRY);
  await redis.zadd("schedule", "1900000001.5", RETRY.replace('"j1"', '"s1"'));
  await redis.zadd("dead", "1800000000.75", RETRY.replace('"j1"', '"d1"'));
  await redis.sadd("queues", "default");
  await redis.lpush("queue:default", RETRY.replace('"j1"', '"q1"'));
  await new CronApi({ redis }).create({ name: "nightly", cron: "0 3 * * *", class: "NightlyJob", queue: "low" });
  await redis.zadd("uniquejobs:digests", String(NOW), "uniquejobs:one");
  await redis.hset("uniquejobs:one:LOCKED", "j9", String(NOW));
  await redis.zadd(
    "uniquejobs:changelog",
    String(NOW),
    JSON.stringify({ digest: "uniquejobs:one", job_id: "j9", script: "lock.lua", message: "Locked", time: NOW }),
  );
});

describe("dashboard routes", () => {
  it("answers a GET or a HEAD on every action URL with 405, Allow: POST, and changes nothing", async () => {
    const base = await web.serve();
    const before = await snapshot();
    for (const path of ACTION_URLS)
      for (const method of ["GET", "HEAD"]) {
        const res = await fetch(`${base}${path}`, { method, redirect: "manual" });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(res.headers.get("allow"), `${method} ${path}`).toBe("POST");
      }
    expect(await snapshot()).toEqual(before);
  });

  it("answers 405 to a GET on every form action the dashboard draws", async () => {
    const base = await web.serve();
    const { pages, forms } = await crawl(base);
    // The crawl reached the add-on tabs and one entry of each kind, so their forms are here.
    for (const p of ["/retries/1900000000.25-j1", "/cron/namespaces/default/jobs/nightly", "/locks/uniquejobs%3Aone"])
      expect(pages.has(p) || pages.has(decodeURIComponent(p)), p).toBe(true);
    expect(forms.size).toBeGreaterThanOrEqual(10);
    // Busy's Quiet and Stop post to the Busy page itself, as in Sidekiq: its GET is the page.
    expect(forms.delete("/busy")).toBe(true);
    for (const action of forms) {
      const res = await fetch(`${base}${action}`, { redirect: "manual" });
      expect(res.status, `GET ${action}`).toBe(405);
      expect(res.headers.get("allow"), `GET ${action}`).toBe("POST");
    }
    // Every page the crawl reached answered 200.
    expect([...pages].filter(([, status]) => status !== 200)).toEqual([]);
  });

  it("still serves the pages next to the actions: one job, one queue, one cron job, one lock", async () => {
    const base = await web.serve();
    for (const path of [
      "/busy",
      "/retries/1900000000.25-j1",
      "/scheduled/1900000001.5-s1",
      "/morgue/1800000000.75-d1",
      "/queues/default",
      // A queue and a cron job may be called "all": only the action URLs are taken.
      "/queues/all",
      "/cron/namespaces/default/jobs/nightly",
      "/locks/uniquejobs%3Aone",
      "/locks/changelogs",
    ]) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain("</html>");
    }
  });

  it("does the same under a base path and in read-only mode", async () => {
    for (const opts of [{ basePath: "/sidekiq" }, { basePath: "/sidekiq", readOnly: true }]) {
      const base = `${await web.serve(opts)}/sidekiq`;
      for (const path of ["/retries/all", "/morgue/selected", "/locks/delete-all"]) {
        const res = await fetch(`${base}${path}`, { redirect: "manual" });
        expect(res.status, path).toBe(405);
        expect(res.headers.get("allow"), path).toBe("POST");
      }
      expect((await fetch(`${base}/retries/1900000000.25-j1`)).status).toBe(200);
    }
  });

  it("answers 405 with Allow: GET to a POST on a page that has no action", async () => {
    const base = await web.serve();
    for (const path of ["/retries", "/retries/1900000000.25-j1", "/metrics", "/locks/changelogs"]) {
      const res = await fetch(`${base}${path}`, { method: "POST", redirect: "manual" });
      expect(res.status, path).toBe(405);
      expect(res.headers.get("allow"), path).toBe("GET");
    }
    // Busy is a page and, as in Sidekiq, its Quiet/Stop form posts to itself.
    const busy = await fetch(`${base}/busy`, { method: "PUT", redirect: "manual" });
    expect(busy.status).toBe(405);
    expect(busy.headers.get("allow")).toBe("GET, POST");
  });
});
