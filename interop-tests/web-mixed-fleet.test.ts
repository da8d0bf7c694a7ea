// The dashboard on a fleet in the middle of an upgrade: real Sidekiq 6.4.1,
// 7.3.2 and 8.1.7 processes and a Node worker on one Redis database. Each
// process's threads and busy count on the Busy page equal what its OWN
// release's API reports (7.3.2's Busy page crashes on an 8.1.7 process, and
// 8.1.7 shows a 7.3.2 process with 0 threads), and the Metrics page adds up
// what 7.3.2's and 8.1.7's Metrics::Query each read from their own keys.
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { SidekiqProcess } from "../harness/backend.js";
import type { SidekiqTarget } from "../harness/versions.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { type WebServer } from "../src/tools/web/server.js";
import { startWebServer } from "../src/assembly/web.js";
import { launchBrowser, num, SCREENSHOTS, type TestBrowser } from "./support/browser.js";
import { allocateDb, backend, RubyError, selected, waitFor } from "./support/harness.js";

const CONCURRENCY: Record<string, number> = { "6.4.1": 3, "7.3.2": 4, "8.1.7": 5 };

async function rubyOn<T>(target: SidekiqTarget, db: number, code: string): Promise<T> {
  const r = await backend().runRuby(target, "eval.rb", [code], { env: { REDIS_URL: backend().rubyRedisUrl(db) } });
  const line = r.stdout.split("\n").find((l) => l.startsWith("__BRIDGE_RESULT__ "));
  if (r.code !== 0 || line === undefined) throw new RubyError(`Ruby ${target.version} failed:\n${r.stderr}${r.stdout}`);
  return JSON.parse(line.slice("__BRIDGE_RESULT__ ".length)) as T;
}

const targets = selected();
const d = targets.length >= 2 ? describe : describe.skip;

d(`web dashboard: a mixed fleet of ${targets.map((t) => t.version).join(", ")} and Node`, () => {
  let db: number;
  let url: string;
  const servers: SidekiqProcess[] = [];
  let worker: Worker;
  let client: Client;
  let web: WebServer;
  let browser: TestBrowser;
  let redis: Redis;

  beforeAll(async () => {
    db = await allocateDb();
    url = `${inject("harness").redisUrl}/${db}`;
    for (const t of targets)
      servers.push(
        await backend().startSidekiq(t, {
          queues: ["mixed", "slow"],
          concurrency: CONCURRENCY[t.version]!,
          timeout: 2,
          tag: `ruby-${t.version}`,
          env: { REDIS_URL: backend().rubyRedisUrl(db) },
        }),
      );
    // Node speaks the dialect of a release that reads metrics, so the sums below include it.
    const nodeDialect = targets.find((t) => t.dialect >= 7)?.version ?? "7.3.2";
    worker = new Worker({
      redis: url,
      dialect: nodeDialect,
      queues: ["mixed"],
      concurrency: 6,
      tag: "node",
      scheduler: false,
    });
    worker.register("RecordJob", () => undefined);
    await worker.start();
    client = new Client({ redis: url, dialect: nodeDialect });
    redis = new Redis(url);
    for (let i = 0; i < 40; i++) await client.push({ class: "RecordJob", queue: "mixed", args: [i] });
    web = await startWebServer({ redis: url, port: 0, pollSeconds: 1 });
    browser = await launchBrowser();
    await waitFor(
      "every process's heartbeat",
      async () => (await rubyOn<number>(targets.at(-1)!, db, "Sidekiq::ProcessSet.new.size")) === targets.length + 1,
      60_000,
    );
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await worker?.stop();
    await client?.close();
    redis?.disconnect();
    await Promise.all(servers.map((s) => s.stop()));
  });

  it("Busy shows every process with the threads and busy count its own release reports", async () => {
    const { page, errors } = await browser.newPage();
    // identity -> [threads, busy] as each release's own ProcessSet reports its own processes.
    const truth = new Map<string, [number, number]>();
    for (const t of targets) {
      const procs = await rubyOn<Array<[string, string | null, number, number]>>(
        t,
        db,
        `Sidekiq::ProcessSet.new.map { |p| [p["identity"], p["tag"], p["concurrency"].to_i, p["busy"].to_i] }`,
      );
      for (const [id, tag, threads, busy] of procs) if (tag === `ruby-${t.version}`) truth.set(id, [threads, busy]);
    }
    truth.set(worker.identity, [6, 0]);
    expect([...truth.values()].map(([t]) => t).sort()).toEqual(
      [...targets.map((t) => CONCURRENCY[t.version]!), 6].sort(),
    );

    await page.goto(`${web.url}busy`);
    const rows = await page.$$eval("#processes tbody tr[data-identity]", (trs) =>
      trs.map((r) => [
        r.getAttribute("data-identity") ?? "",
        r.querySelector('[data-col="threads"]')?.textContent ?? "",
        r.querySelector('[data-col="busy"]')?.textContent ?? "",
        r.textContent ?? "",
      ]),
    );
    expect(rows.map(([id, t, b]) => [id, num(t!), num(b!)]).sort()).toEqual(
      [...truth.entries()].map(([id, [t, b]]) => [id, t, b]).sort(),
    );
    for (const t of targets)
      expect(rows.find(([, , , text]) => text!.includes(`ruby-${t.version}`))?.[3]).toContain(
        t.version === "6.4.1" ? "Version: -" : `Version: ${t.version}`,
      );
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Metrics adds up what 7.x and 8.x each record under their own keys", async () => {
    const metered = targets.filter((t) => t.dialect >= 7);
    if (metered.length === 0) return;
    const { page, errors } = await browser.newPage();
    await waitFor("the 40 jobs to run", async () => (await redis.llen("queue:mixed")) === 0);
    let last: unknown;
    await waitFor(
      "the Metrics page to equal the sum of each release's Metrics::Query",
      async () => {
        let success = 0;
        let failure = 0;
        let timed = 0;
        for (const t of metered) {
          const [p, f, h] = await rubyOn<[number, number, number]>(
            t,
            db,
            `q = Sidekiq::Metrics::Query.new
             jr = q.top_jobs(minutes: 60).job_results["RecordJob"]
             hist = q.for_job("RecordJob", minutes: 60).job_results["RecordJob"].hist
             [jr.totals["p"], jr.totals["f"], hist.values.map(&:sum).sum]`,
          );
          success += p - f;
          failure += f;
          timed += h;
        }
        // The execution-time histogram (BITFIELD keys of both releases) counts the same successful jobs.
        await page.goto(`${web.url}metrics/RecordJob`);
        const histogram = num(await page.getAttribute("#job-histogram", "data-total"));
        await page.goto(`${web.url}metrics`);
        const row = await page.$('#metrics tr[data-class="RecordJob"]');
        const shown = row
          ? [
              num(await row.$eval('[data-col="success"]', (e) => e.textContent)),
              num(await row.$eval('[data-col="failure"]', (e) => e.textContent)),
            ]
          : [0, 0];
        last = { ruby: [success, failure, timed], shown, histogram };
        return success > 0 && shown[0] === success && shown[1] === failure && histogram === timed;
      },
      45_000,
    ).catch((e) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(last)}`);
    });
    await page.goto(`${web.url}metrics/RecordJob`);
    await page.screenshot({ path: join(SCREENSHOTS, "metrics-job.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Busy lists the jobs running now on 6.4 (its :workers hash), 7.x and 8.x (:work) processes", async () => {
    const { page, errors } = await browser.newPage();
    const jids: string[] = [];
    for (let i = 0; i < 8; i++) jids.push((await client.push({ class: "SlowJob", queue: "slow", args: [40, i] }))!);
    // What each release's own WorkSet reports for its own processes.
    const truth = async () => {
      const all: string[] = [];
      for (const t of targets) {
        const rows = await rubyOn<Array<[string, string]>>(
          t,
          db,
          `mine = Sidekiq::ProcessSet.new.select { |p| p["tag"] == "ruby-${t.version}" }.map { |p| p["identity"] }
           Sidekiq::WorkSet.new.select { |pid, _tid, _w| mine.include?(pid) }.map { |pid, _tid, w|
             payload = w.respond_to?(:payload) ? w.payload : w["payload"]
             payload = JSON.parse(payload) if payload.is_a?(String)
             [pid, payload["jid"]] }`,
        );
        for (const [, jid] of rows) all.push(jid);
      }
      return all.sort();
    };
    let last: unknown;
    await waitFor(
      "every slow job to show on the Busy page as each release's WorkSet reports it",
      async () => {
        const want = await truth();
        await page.goto(`${web.url}busy`);
        const shown = (
          await page.$$eval("#work tbody tr td:nth-child(3) code", (cs) => cs.map((c) => c.textContent ?? ""))
        ).sort();
        last = { want, shown };
        return want.length === jids.length && JSON.stringify(shown) === JSON.stringify(want);
      },
      60_000,
    ).catch((e) => {
      throw new Error(`${(e as Error).message}: ${JSON.stringify(last)}`);
    });
    await page.screenshot({ path: join(SCREENSHOTS, "busy-mixed-fleet.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Dashboard: the history per day is Ruby's Stats::History", async () => {
    const ruby = targets.at(-1)!;
    // Thirty past days of counters, as every release writes them (stat:processed:<date>).
    await rubyOn(
      ruby,
      db,
      `Sidekiq.redis { |c| (1..29).each { |i| d = (Time.now.utc - i * 86400).strftime("%Y-%m-%d")
         c.set("stat:processed:#{d}", 800 + (i * 137) % 900); c.set("stat:failed:#{d}", (i * 17) % 60) } }; true`,
    );
    const want = await rubyOn<{ processed: Record<string, number>; failed: Record<string, number> }>(
      ruby,
      db,
      `h = Sidekiq::Stats::History.new(30); { "processed" => h.processed, "failed" => h.failed }`,
    );
    const { page, errors } = await browser.newPage();
    await page.goto(web.url);
    const rows = await page.$$eval("#history tbody tr", (trs) =>
      trs.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")),
    );
    expect(Object.fromEntries(rows.map(([d, p]) => [d, num(p)]))).toEqual(want.processed);
    expect(Object.fromEntries(rows.map(([d, , f]) => [d, num(f)]))).toEqual(want.failed);
    // A little traffic for the realtime chart, polled every second.
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 20; j++) await client.push({ class: "RecordJob", queue: "mixed", args: [i, j] });
      await page.waitForTimeout(1500);
    }
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
