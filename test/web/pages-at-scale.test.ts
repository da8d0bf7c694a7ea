// Busy a page at a time (totals over the whole fleet, filters by host, queue
// and class, `?only=`), and the sorted sets' filters reading bounded ranges
// under a budget and saying how far they got. On a throwaway redis-server;
// the order against Ruby's own Web UI is in interop-tests/web-order.test.ts.
import { beforeAll, describe, expect, it } from "vitest";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();

const PROCESSES = 30;
const JOBS = 4;

function jidOf(p: number, t: number): string {
  return `bj${String(p * JOBS + t).padStart(22, "0")}`;
}

/** The jids at positions [from, from + n) of Busy's order (oldest run_at first: run_at falls with p * JOBS + t). */
function oldestFirst(from: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    const k = PROCESSES * JOBS - 1 - (from + i);
    return jidOf(Math.floor(k / JOBS), k % JOBS);
  });
}

beforeAll(async () => {
  const { redis } = web;
  await redis.flushdb();
  const pipe = redis.pipeline();
  const now = 1_900_000_000;
  for (let p = 0; p < PROCESSES; p++) {
    const host = `web-${p % 3}`;
    const id = `${host}:${100 + p}:n${p}`;
    const queue = p % 2 === 0 ? "even" : "odd";
    pipe.sadd("processes", id);
    pipe.hset(id, {
      info: JSON.stringify({
        hostname: host,
        pid: 100 + p,
        identity: id,
        queues: [queue],
        concurrency: 10,
        labels: [],
      }),
      busy: String(JOBS),
      beat: String(now),
      quiet: "false",
      rss: "1000",
      rtt_us: "10",
      concurrency: "10",
    });
    for (let t = 0; t < JOBS; t++) {
      const payload = JSON.stringify({ class: t === 0 ? "RareJob" : "CommonJob", args: [t], jid: jidOf(p, t), queue });
      pipe.hset(`${id}:work`, `tid${t}`, JSON.stringify({ queue, payload, run_at: now - p * JOBS - t }));
    }
  }
  // A work value written in another key order (run_at first): found wherever it is.
  pipe.hset(
    `web-0:100:n0:work`,
    "tid0",
    JSON.stringify({
      run_at: now,
      queue: "even",
      payload: JSON.stringify({ class: "RareJob", args: [0], jid: jidOf(0, 0), queue: "even" }),
    }),
  );
  for (let i = 0; i < 5000; i++)
    pipe.zadd(
      "retry",
      String(now + i),
      JSON.stringify({ class: i % 1000 === 7 ? "NeedleJob" : "HayJob", args: [i], jid: `r${i}`, queue: "q" }),
    );
  await pipe.exec();
});

const jids = (body: string) => [...body.matchAll(/<tr data-jid="([^"]*)"/g)].map((m) => m[1]!);
const identities = (body: string) => [...body.matchAll(/<tr data-identity="([^"]*)"/g)].map((m) => m[1]!);
const text = (body: string, id: string) => new RegExp(`id="${id}">([^<]*)<`).exec(body)?.[1];

describe("Busy, a page at a time", () => {
  it("totals cover the fleet while each table shows one page, oldest run_at first", async () => {
    const base = await web.serve();
    const body = await (await fetch(`${base}/busy?count=10&process_count=7`)).text();
    expect(text(body, "busy-processes")).toBe("30");
    expect(text(body, "busy-threads")).toBe("300");
    expect(text(body, "busy-busy")).toBe("120");
    expect(text(body, "busy-job-total")).toBe("120 running");
    expect(identities(body)).toHaveLength(7);
    expect(jids(body)).toEqual(oldestFirst(0, 10));
    const deep = await (await fetch(`${base}/busy?count=10&page=12`)).text();
    expect(jids(deep)).toEqual(oldestFirst(110, 10));
    // Past the end, Ruby's page_items shows page 1.
    expect(jids(await (await fetch(`${base}/busy?count=10&page=99`)).text())).toEqual(jids(body));
    // Hostnames in natural order, then identity (the API's default release is 8.x).
    const procs = identities(await (await fetch(`${base}/busy?only=processes&process_count=100`)).text());
    expect(procs).toEqual(
      [...procs].sort((a, b) => a.split(":")[0]!.localeCompare(b.split(":")[0]!) || (a < b ? -1 : 1)),
    );
  });

  it("filters by host, queue and class, keeping the fleet's totals", async () => {
    const base = await web.serve();
    const byClass = await (await fetch(`${base}/busy?class=RareJob`)).text();
    expect(text(byClass, "busy-busy")).toBe("120");
    expect(text(byClass, "busy-job-total")).toBe("30 running matching");
    expect(jids(byClass)).toEqual(Array.from({ length: 30 }, (_, i) => jidOf(29 - i, 0)));
    const byHostQueue = await (await fetch(`${base}/busy?host=web-1&queue=odd`)).text();
    const hostProcs = identities(byHostQueue);
    expect(hostProcs.length).toBe(5);
    expect(hostProcs.every((id) => id.startsWith("web-1:"))).toBe(true);
    expect(jids(byHostQueue)).toHaveLength(5 * JOBS);
  });

  it("?only=jobs|processes draws one table; any other value is refused", async () => {
    const base = await web.serve();
    const jobsOnly = await (await fetch(`${base}/busy?only=jobs`)).text();
    expect(identities(jobsOnly)).toEqual([]);
    expect(jids(jobsOnly)).toHaveLength(100);
    const procsOnly = await (await fetch(`${base}/busy?only=processes`)).text();
    expect(jids(procsOnly)).toEqual([]);
    expect(identities(procsOnly)).toHaveLength(30);
    const bad = await fetch(`${base}/busy?only=everything`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Invalid value for only");
  });
});

describe("sorted-set filters", () => {
  it("read ranges up to a budget, say how far they got, and go on from there", async () => {
    const api = new SidekiqApi({ redis: web.redis });
    try {
      const first = await api.retries.filteredPage({
        match: (e) => e.klass === "NeedleJob",
        from: 0,
        limit: 25,
        budget: 2500,
        order: "asc",
      });
      expect(first.entries.map((e) => e.jid)).toEqual(["r7", "r1007", "r2007", "r3007"]);
      expect(first.scanned).toBe(4000); // whole ranges of 2,000 until the budget is spent
      const rest = await api.retries.filteredPage({
        match: (e) => e.klass === "NeedleJob",
        from: first.next!,
        limit: 25,
        order: "asc",
      });
      expect(rest.entries.map((e) => e.jid)).toEqual(["r4007"]);
      expect(rest.next).toBeUndefined();
      // A spent time budget stops before reading anything.
      const none = await api.retries.filteredPage({ match: () => true, limit: 25, budgetMs: 0 });
      expect(none).toEqual({ entries: [], next: 0, scanned: 0 });
    } finally {
      await api.close();
    }
  });

  it("the page shows scanned X of Y, in the page's order", async () => {
    const base = await web.serve();
    // Following "More matches" (a loaded machine may spend the time budget before the end).
    const found: string[] = [];
    let path = "/retries?class=NeedleJob";
    let body = "";
    for (let i = 0; i < 10 && path; i++) {
      body = await (await fetch(`${base}${path}`)).text();
      found.push(...jids(body));
      expect(text(body, "filter-size")).toBe("5,000");
      path = (/id="filter-next" href="([^"]+)"/.exec(body)?.[1] ?? "").replace(/&amp;/g, "&");
    }
    expect(found).toEqual(["r7", "r1007", "r2007", "r3007", "r4007"]);
    expect(text(body, "filter-scanned")).toBe("5,000");
  });
});
