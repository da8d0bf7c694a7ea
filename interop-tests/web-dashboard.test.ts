// The web dashboard in real headless Chromium, on data written by real Ruby
// Sidekiq (a real `sidekiq` process failing jobs into the retry and dead
// sets) and by a Node worker: every page renders with no console error, the
// numbers equal what Ruby's own API reports on the same Redis, each action
// does what it says (a job retried from the page is then run by the Ruby
// worker), hostile payloads stay text, and POSTs need a CSRF token.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { type WebServer } from "../src/tools/web/server.js";
import { startWebServer } from "../src/assembly/web.js";
import { launchBrowser, num, SCREENSHOTS, type TestBrowser } from "./support/browser.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

async function statOf(page: Page, key: string): Promise<number> {
  return num(await page.textContent(`[data-stat="${key}"]`));
}

const PAGES = ["/", "/busy", "/queues", "/queues/web-idle", "/retries", "/scheduled", "/morgue", "/metrics"];
const EVIL_CLASS = `"><img src=x onerror=alert(1)>`;
const EVIL_QUEUE = "<script>alert('q')</script>";

describeEachSidekiq("web dashboard in Chromium", (sk) => {
  let web: WebServer;
  let browser: TestBrowser;
  let worker: Worker;
  let client: Client;
  const flakyJids: string[] = [];

  beforeAll(async () => {
    await sk.redis.set("web:fail", "1");
    const jids = await sk.ruby<string[]>(`
      require File.expand_path("lib/web_jobs.rb", File.dirname($0))
      jids = 3.times.map { |i| WebFlakyJob.set(queue: "web").perform_async("flaky", i) }
      jids += 2.times.map { |i| WebDeadJob.set(queue: "web").perform_async("dead", i) }
      5.times { |i| Sidekiq::Client.push("class" => "RecordJob", "queue" => "web-idle", "args" => [i, "idle"]) }
      2.times { |i| RecordJob.perform_in(3600 + i, "later", i) }
      Sidekiq::Client.push("class" => ${JSON.stringify(EVIL_CLASS)}, "queue" => ${JSON.stringify(EVIL_QUEUE)},
        "args" => ["<script>alert('arg')</script>", "x" * 10_000_000])
      jids
    `);
    flakyJids.push(...jids.slice(0, 3));
    await sk.startSidekiq({ queues: ["web"], concurrency: 2, tag: "ruby-web", require: "lib/web_jobs.rb" });
    worker = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["node-web"],
      concurrency: 3,
      tag: "node-web",
      scheduler: false,
      timeout: 3,
    });
    // Retried an hour later (like WebFlakyJob), so no poller moves it while the pages are compared.
    worker.register(
      "NodeFailJob",
      () => {
        throw new RangeError("node failure <b>bold</b>");
      },
      { retryIn: () => 3600 },
    );
    await worker.start();
    client = new Client({ redis: sk.url, dialect: sk.target.version });
    await client.push({ class: "NodeFailJob", queue: "node-web", args: [42] });
    await waitFor(
      "the Ruby and Node failures to land in the retry and dead sets",
      async () => (await sk.redis.zcard("retry")) === 4 && (await sk.redis.zcard("dead")) === 2,
      60_000,
    );
    // Sidekiq counts processed and failed jobs in memory and writes them at its
    // next heartbeat (Node does the same), so wait for both processes' six
    // failures to reach Redis before any page is compared with Ruby's API.
    await waitFor(
      "both processes to write their processed and failed counts",
      async () => (await sk.redis.get("stat:processed")) === "6" && (await sk.redis.get("stat:failed")) === "6",
      60_000,
    );
    web = await startWebServer({ redis: sk.url, port: 0, apiOptions: { apiVersion: sk.target.version } });
    browser = await launchBrowser();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await worker?.stop();
    await client?.close();
  });

  it("renders every page with no console error, and takes the screenshots", async () => {
    const { page, errors } = await browser.newPage();
    const shots = sk.target.dialect === 8;
    if (shots) mkdirSync(SCREENSHOTS, { recursive: true });
    for (const p of PAGES) {
      const res = await page.goto(`${web.url.replace(/\/$/, "")}${p}`);
      expect(res?.status(), p).toBe(200);
      expect(res?.headers()["content-security-policy"]).toContain("script-src 'self'");
      // The dashboard's screenshot comes from the mixed-fleet test, where it has history and traffic.
      if (shots && p !== "/") {
        const name = p === "/" ? "dashboard" : p.slice(1).replace(/\//g, "-");
        await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
      }
    }
    // One job's page, with its error and decoded backtrace.
    await page.goto(`${web.url}retries`);
    await page.click(`tr[data-jid="${flakyJids[0]}"] td:nth-child(2) a`);
    expect(await page.textContent("#error-info")).toContain("web flaky failure");
    expect(await page.textContent("#error-info")).toMatch(/web_jobs\.rb:\d+/);
    if (shots) await page.screenshot({ path: join(SCREENSHOTS, "retry.png"), fullPage: true });
    await page.goto(`${web.url}metrics/WebFlakyJob`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows the numbers Ruby's API reports on the same Redis", async () => {
    const { page, errors } = await browser.newPage();
    const ruby = await sk.ruby<{
      stats: Record<string, number>;
      today: number;
      queues: Array<[string, number]>;
      procs: Array<[string, number, number]>;
    }>(`
      s = Sidekiq::Stats.new
      { "stats" => { "processed" => s.processed, "failed" => s.failed, "enqueued" => s.enqueued,
          "retries" => s.retry_size, "scheduled" => s.scheduled_size, "dead" => s.dead_size, "busy" => s.workers_size },
        "today" => Sidekiq::Stats::History.new(1).processed.values.first.to_i,
        "queues" => Sidekiq::Queue.all.map { |q| [q.name, q.size] },
        "procs" => Sidekiq::ProcessSet.new.map { |p| [p["identity"], p["concurrency"].to_i, p["busy"].to_i] } }
    `);
    await page.goto(web.url);
    for (const [k, v] of Object.entries(ruby.stats)) expect(await statOf(page, k), k).toBe(v);
    expect(num(await page.textContent("#history tbody tr:first-child td:nth-child(2)"))).toBe(ruby.today);

    await page.goto(`${web.url}queues`);
    const shown = await page.$$eval("#queues tbody tr[data-queue]", (rows) =>
      rows.map((r) => [r.getAttribute("data-queue"), r.querySelector('[data-col="size"]')?.textContent ?? ""]),
    );
    expect(shown.map(([n, s]) => [n, num(s!)]).sort(), "queue names and sizes").toEqual([...ruby.queues].sort());

    await page.goto(`${web.url}busy`);
    const procs = await page.$$eval("#processes tbody tr[data-identity]", (rows) =>
      rows.map((r) => [
        r.getAttribute("data-identity"),
        r.querySelector('[data-col="threads"]')?.textContent ?? "",
        r.querySelector('[data-col="busy"]')?.textContent ?? "",
      ]),
    );
    expect(procs.map(([id, t, b]) => [id, num(t!), num(b!)]).sort()).toEqual([...ruby.procs].sort());

    // Filters: by class (exact, the display class) and by text, read newest first.
    const byClass = await sk.ruby<string[]>(
      `Sidekiq::RetrySet.new.select { |e| e.display_class == "WebFlakyJob" }.map(&:jid).sort`,
    );
    await page.goto(`${web.url}retries?class=WebFlakyJob`);
    expect(
      (await page.$$eval("#set-jobs tbody tr[data-jid]", (rs) => rs.map((r) => r.getAttribute("data-jid")))).sort(),
    ).toEqual(byClass);
    const byText = await sk.ruby<string[]>(`Sidekiq::RetrySet.new.scan("node failure").map(&:jid)`);
    await page.goto(`${web.url}retries?substr=${encodeURIComponent("node failure")}`);
    expect(
      await page.$$eval("#set-jobs tbody tr[data-jid]", (rs) => rs.map((r) => r.getAttribute("data-jid"))),
    ).toEqual(byText);
    expect(byText).toHaveLength(1);

    if (sk.target.dialect >= 7) {
      // Metrics are flushed on each process's heartbeat: compare once both sides agree, or fail after the wait.
      let last: unknown;
      await waitFor(
        "the Metrics page to match Ruby's Metrics::Query",
        async () => {
          const want = await sk.ruby<Array<[string, number, number, string]>>(`
            r = Sidekiq::Metrics::Query.new.top_jobs(minutes: 60)
            r.job_results.map { |k, jr| [k, jr.totals["p"] - jr.totals["f"], jr.totals["f"], format("%.2f", jr.totals["s"])] }.sort
          `);
          await page.goto(`${web.url}metrics`);
          const got = await page.$$eval("#metrics tbody tr[data-class]", (rows) =>
            rows.map((r) => [
              r.getAttribute("data-class"),
              r.querySelector('[data-col="success"]')?.textContent ?? "",
              r.querySelector('[data-col="failure"]')?.textContent ?? "",
              r.querySelector('[data-col="total"]')?.textContent ?? "",
            ]),
          );
          const mine = got.map(([k, s, f, t]) => [k, num(s!), num(f!), t!.replace(/,/g, "")]).sort();
          last = { want, mine };
          return want.length > 0 && JSON.stringify(want) === JSON.stringify(mine);
        },
        40_000,
      ).catch((e) => {
        throw new Error(`${(e as Error).message}: ${JSON.stringify(last)}`);
      });
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it("keeps hostile class names, arguments and queue names as text, and cuts 10 MB values", async () => {
    const { page, errors } = await browser.newPage();
    await page.goto(`${web.url}queues`);
    expect(await page.textContent("#queues")).toContain(EVIL_QUEUE);
    await page.goto(`${web.url}queues/${encodeURIComponent(EVIL_QUEUE)}`);
    const text = (await page.textContent("#queue-jobs")) ?? "";
    expect(text).toContain(EVIL_CLASS);
    expect(text).toContain("<script>alert('arg')</script>");
    expect(text).toContain("more characters");
    expect(await page.$$("img")).toHaveLength(0);
    expect((await page.content()).length).toBeLessThan(200_000);
    await page.goto(`${web.url}morgue`);
    expect(await page.textContent("#set-jobs")).toContain("<script>alert('dead')</script>");
    expect(errors).toEqual([]); // an alert() would have been recorded
    await page.close();
  });

  it("Retry Now on the Retries page: the real Ruby worker then runs the job", async () => {
    const { page, errors } = await browser.newPage();
    await sk.redis.del("web:fail");
    await page.goto(`${web.url}retries`);
    await page.check(`tr[data-jid="${flakyJids[0]}"] input[type=checkbox]`);
    await Promise.all([page.waitForURL(/\/retries$/), page.click(".bulk.selected button[value=retry]")]);
    expect(await page.$(`tr[data-jid="${flakyJids[0]}"]`)).toBeNull();
    const received = await waitFor("the Ruby worker to run the retried job", async () => {
      for (const line of await sk.redis.lrange("bridge:received", 0, -1)) {
        const e = JSON.parse(line) as { jid: string; class: string; job: Record<string, unknown> };
        if (e.jid === flakyJids[0]) return e;
      }
      return undefined;
    });
    expect(received.class).toBe("WebFlakyJob");
    // Retry Now decrements retry_count before pushing, as Ruby's SortedEntry#retry.
    expect(received.job.retry_count).toBe(-1);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Kill, Delete, Add to Queue, Delete All and the queue's Delete and Clear do what they say", async () => {
    const { page, errors } = await browser.newPage();
    // Kill one retry from its own page: it moves to the Dead set.
    await page.goto(`${web.url}retries`);
    await page.click(`tr[data-jid="${flakyJids[1]}"] td:nth-child(2) a`);
    await Promise.all([page.waitForURL(/\/retries$/), page.click("button[value=kill]")]);
    expect(await sk.ruby(`Sidekiq::DeadSet.new.find_job(${JSON.stringify(flakyJids[1])})&.jid`)).toBe(flakyJids[1]);
    expect(await sk.ruby(`Sidekiq::RetrySet.new.find_job(${JSON.stringify(flakyJids[1])}).nil?`)).toBe(true);

    // Add to Queue from Scheduled: every scheduled job, pushed to its queue now.
    await page.goto(`${web.url}scheduled`);
    await page.check("#set-jobs thead input.check-all");
    await Promise.all([page.waitForURL(/\/scheduled$/), page.click(".bulk.selected button[value=add-to-queue]")]);
    expect(await sk.ruby("[Sidekiq::ScheduledSet.new.size, Sidekiq::Queue.new('default').size]")).toEqual([0, 2]);

    // Delete one job from a queue, then clear the queue.
    await page.goto(`${web.url}queues/web-idle`);
    const first = await page.getAttribute("#queue-jobs tbody tr:first-child", "data-jid");
    await Promise.all([page.waitForURL(/\/queues\/web-idle$/), page.click("#queue-jobs tbody tr:first-child button")]);
    expect(
      await sk.ruby(`q = Sidekiq::Queue.new("web-idle"); [q.size, q.find_job(${JSON.stringify(first)}).nil?]`),
    ).toEqual([4, true]);
    await Promise.all([page.waitForURL(/\/queues$/), page.click("section > header form button")]);
    expect(await sk.ruby(`Sidekiq::Queue.new("web-idle").size`)).toBe(0);

    // Delete All on the Dead page with a class filter: only that class goes.
    // The counts follow on the bulk-result page.
    const toDelete = await sk.ruby<number>(`Sidekiq::DeadSet.new.count { |e| e.klass == "WebDeadJob" }`);
    await page.goto(`${web.url}morgue?class=WebDeadJob`);
    await Promise.all([
      page.waitForURL(/\/morgue\/bulk-result\?/),
      page.click(".bulk:not(.selected) button[value=delete]"),
    ]);
    expect(await page.textContent("#bulk-moved")).toBe(String(toDelete));
    expect(await sk.ruby("Sidekiq::DeadSet.new.map(&:klass).sort")).toEqual(["WebFlakyJob"]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Quiet on the Busy page quiets the real Ruby process", async () => {
    const { page, errors } = await browser.newPage();
    const identity = await sk.ruby<string>(`Sidekiq::ProcessSet.new.find { |p| p["tag"] == "ruby-web" }["identity"]`);
    await page.goto(`${web.url}busy`);
    await Promise.all([page.waitForURL(/\/busy$/), page.click(`tr[data-identity="${identity}"] button[value=quiet]`)]);
    await waitFor(
      "the Ruby process to report itself quiet",
      async () =>
        sk.ruby<boolean>(
          `Sidekiq::ProcessSet.new.find { |p| p["identity"] == ${JSON.stringify(identity)} }&.stopping?`,
        ),
      40_000,
    );
    await page.reload();
    expect(await page.textContent(`tr[data-identity="${identity}"]`)).toContain("quiet");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("refuses a POST without the CSRF token or from another origin, an action by GET, and every POST when read-only", async () => {
    const before = await sk.redis.zcard("retry");
    const post = (url: string, body: string, headers: Record<string, string> = {}) =>
      fetch(url, {
        method: "POST",
        body,
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      });
    expect((await post(`${web.url}retries/all`, "action=delete")).status).toBe(403);
    // A valid cookie and token, but sent from another origin.
    const { page } = await browser.newPage();
    await page.goto(`${web.url}retries`);
    const token = await page.getAttribute("input[name=authenticity_token]", "value");
    const cookie = (await browser.context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    expect(
      (
        await post(`${web.url}retries/all`, `action=delete&authenticity_token=${token}`, {
          cookie,
          origin: "http://evil.example",
        })
      ).status,
    ).toBe(403);
    // No action on a GET: the action URLs answer 405, and a GET that names one changes nothing.
    expect((await fetch(`${web.url}queues/default/clear`)).status).toBe(405);
    expect((await fetch(`${web.url}retries/all?action=delete`)).status).toBe(405);
    expect(await sk.ruby(`Sidekiq::Queue.new("default").size`)).toBe(2);
    expect(await sk.redis.zcard("retry")).toBe(before);

    const ro = await startWebServer({ redis: sk.url, port: 0, readOnly: true });
    try {
      const { page: p2, errors } = await browser.newPage();
      await p2.goto(`${ro.url}retries`);
      expect(await p2.$$("form[method=post]")).toHaveLength(0);
      expect(await p2.textContent(".navbar")).toContain("read-only");
      const refused = await post(`${ro.url}retries/all`, `action=delete&authenticity_token=${token}`, { cookie });
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain("read-only");
      expect(errors).toEqual([]);
    } finally {
      await ro.close();
    }
    expect(await sk.redis.zcard("retry")).toBe(before);
    await page.close();
  });
});
