// The dashboard's Cron and Locks tabs in real headless Chromium, on data the
// REAL gems wrote: sidekiq-cron 2.3.1 (with fugit and cronex) creates and
// enqueues cron jobs, sidekiq-unique-jobs 8.1.0 pushes unique jobs so their
// locks exist. The tabs list what `Sidekiq::Cron::Job.all` and
// `SidekiqUniqueJobs::Digests.new.entries` report, and what is done in the
// browser (Disable, Enqueue Now, Delete a lock) is what Ruby then sees.
// sidekiq-cron 2.3 needs Ruby 3.3: Sidekiq 7.3.2 (trixie) and 8.1.7 (forky).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type WebServer } from "../src/tools/web/server.js";
import { startWebServer } from "../src/assembly/web.js";
import { launchBrowser, num, SCREENSHOTS, type TestBrowser } from "./support/browser.js";
import { cronRuby } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";
import { uniqueRuby } from "./support/unique-jobs.js";

interface RubyCronJob {
  name: string;
  namespace: string;
  cron: string;
  klass: string;
  status: string;
  last: boolean;
}

const EVIL_NAME = `<img src=x onerror=alert("cron")>`;

describeEachSidekiq(
  "web dashboard: the Cron and Locks tabs on the real gems' data",
  (sk) => {
    let web: WebServer;
    let browser: TestBrowser;
    let cron: <T>(code: string) => Promise<T>;
    let unique: <T>(code: string) => Promise<T>;
    const shots = sk.target.dialect === 8;

    const rubyCronJobs = () =>
      cron<RubyCronJob[]>(`
        Sidekiq::Cron::Job.all("*").map { |j| h = j.to_hash
          { "name" => j.name, "namespace" => j.namespace, "cron" => j.cron, "klass" => h[:klass],
            "status" => j.status, "last" => !j.last_enqueue_time.nil? } }
      `);
    /** Each digest set as the gem reads it: digest => how many jids hold the lock. */
    const rubyDigests = (set: "Digests" | "ExpiringDigests" = "Digests") =>
      unique<Record<string, number>>(`
        SidekiqUniqueJobs::${set}.new.entries.keys.to_h { |d| [d, SidekiqUniqueJobs::Lock.new(d).locked.count] }
      `);
    const shownDigests = (page: import("playwright-core").Page) =>
      page.$$eval("#locks tbody tr[data-digest]", (trs) =>
        Object.fromEntries(
          trs.map((tr) => [
            tr.getAttribute("data-digest") ?? "",
            Number((tr.querySelectorAll("td")[2]?.textContent ?? "").replace(/,/g, "")),
          ]),
        ),
      );

    beforeAll(async () => {
      cron = cronRuby(sk);
      unique = uniqueRuby(sk, "sidekiq-unique-jobs-8.1.0");
      await cron(`
        Sidekiq::Cron::Job.create(name: "nightly", cron: "0 3 * * *", class: "NotLoadedJob", queue: "low", args: [1, "two"])
        Sidekiq::Cron::Job.create(name: "every-5", cron: "*/5 * * * *", class: "Billing::NotLoadedJob", description: "five")
        Sidekiq::Cron::Job.create(name: ${JSON.stringify(EVIL_NAME)}, cron: "@hourly", class: "NotLoadedJob", status: "disabled")
        Sidekiq::Cron::Job.create(name: "report", cron: "0 9 * * mon-fri Europe/Berlin", class: "NotLoadedJob", namespace: "reports")
        Sidekiq::Cron::Job.find("nightly").enqueue!
      `);
      await unique(`
        SidekiqUniqueJobs.config.lock_info = true
        3.times { |i| UntilExecutedJob.perform_async("web", i) }
        # An hour, not the class's 30 s: the Locks tab is compared with Ruby's
        # count well after this, and a slow run must not see the lock expire.
        UntilExpiredJob.set(lock_ttl: 3600).perform_async("web-expiring")
      `);
      web = await startWebServer({ redis: sk.url, port: 0, apiOptions: { apiVersion: sk.target.version } });
      browser = await launchBrowser();
      if (shots) mkdirSync(SCREENSHOTS, { recursive: true });
    }, 300_000);

    afterAll(async () => {
      await browser?.close();
      await web?.close();
    });

    it("the Cron tab lists what Sidekiq::Cron::Job.all reports, per namespace", async () => {
      const ruby = await rubyCronJobs();
      expect(ruby).toHaveLength(4);
      const { page, errors } = await browser.newPage();
      const rows: RubyCronJob[] = [];
      for (const ns of ["default", "reports"]) {
        const res = await page.goto(`${web.url}cron/namespaces/${ns}`);
        expect(res?.status()).toBe(200);
        rows.push(
          ...(await page.$$eval(
            "#cron-jobs tbody tr[data-cron-job]",
            (trs, namespace) =>
              trs.map((tr) => {
                const td = tr.querySelectorAll("td");
                return {
                  name: tr.getAttribute("data-cron-job") ?? "",
                  namespace,
                  cron: (td[2]?.textContent ?? "").replace(/\u00a0/g, " "),
                  klass: td[3]?.textContent ?? "",
                  status: tr.getAttribute("data-status") ?? "",
                  last: (td[5]?.textContent ?? "-") !== "-",
                };
              }),
            ns,
          )),
        );
      }
      const byName = (a: RubyCronJob, b: RubyCronJob) => a.name.localeCompare(b.name);
      expect(rows.sort(byName)).toEqual([...ruby].sort(byName));
      await page.goto(`${web.url}cron`);
      expect(num(await page.textContent("#cron-namespaces article.active .count"))).toBe(3);
      // The hostile name stays text.
      expect(await page.$$("img")).toHaveLength(0);
      if (shots) await page.screenshot({ path: join(SCREENSHOTS, "cron.png"), fullPage: true });
      await page.click('tr[data-cron-job="nightly"] td:nth-child(2) a');
      const history = await cron<Array<{ jid: string }>>(`Sidekiq::Cron::Job.find("nightly").jid_history_from_redis`);
      expect(history).toHaveLength(1);
      expect(await page.textContent("#cron-history")).toContain(history[0]!.jid);
      expect(await page.textContent("#cron-job")).toContain('"two"');
      if (shots) await page.screenshot({ path: join(SCREENSHOTS, "cron-job.png"), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    });

    it("Disable and Enqueue Now in the browser are what Ruby then sees", async () => {
      const { page, errors } = await browser.newPage();
      await page.goto(`${web.url}cron`);
      await page.click('tr[data-cron-job="every-5"] button[data-action="disable"]');
      await page.waitForSelector('tr[data-cron-job="every-5"][data-status="disabled"]');
      expect(await cron<string>(`Sidekiq::Cron::Job.find("every-5").status`)).toBe("disabled");
      await page.click('tr[data-cron-job="every-5"] button[data-action="enable"]');
      await page.waitForSelector('tr[data-cron-job="every-5"][data-status="enabled"]');
      expect(await cron<string>(`Sidekiq::Cron::Job.find("every-5").status`)).toBe("enabled");

      const before = await sk.redis.llen("queue:default");
      await page.click('tr[data-cron-job="every-5"] button[data-action="enqueue"]');
      await page.waitForURL(/\/cron\/namespaces\/default$/);
      const seen = await cron<{ history: Array<{ jid: string }>; jobs: Array<{ jid: string; klass: string }> }>(`
        { "history" => Sidekiq::Cron::Job.find("every-5").jid_history_from_redis,
          "jobs" => Sidekiq::Queue.new("default").map { |j| { "jid" => j.jid, "klass" => j.klass } } }
      `);
      expect(seen.jobs).toHaveLength(before + 1);
      expect(seen.history).toHaveLength(1);
      expect(seen.jobs).toContainEqual({ jid: seen.history[0]!.jid, klass: "Billing::NotLoadedJob" });

      await page.click('button[data-action="disable-all"]');
      await page.waitForURL(/\/cron\/namespaces\/default$/);
      expect((await rubyCronJobs()).filter((j) => j.namespace === "default").map((j) => j.status)).toEqual([
        "disabled",
        "disabled",
        "disabled",
      ]);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("the Locks tab lists what SidekiqUniqueJobs::Digests reports, with each lock's keys", async () => {
      const ruby = await rubyDigests();
      const expiring = await rubyDigests("ExpiringDigests");
      expect(Object.keys(ruby)).toHaveLength(3);
      expect(Object.keys(expiring)).toHaveLength(1);
      const { page, errors } = await browser.newPage();
      const res = await page.goto(`${web.url}locks`);
      expect(res?.status()).toBe(200);
      expect(await shownDigests(page)).toEqual(ruby);
      expect(await page.textContent("#locks")).toContain("until_executed");
      if (shots) await page.screenshot({ path: join(SCREENSHOTS, "locks.png"), fullPage: true });
      await page.click("#locks-expiring");
      await page.waitForURL(/expiring=1/);
      expect(await shownDigests(page)).toEqual(expiring);
      expect(await page.textContent("#locks")).toContain("until_expired");
      await page.goto(`${web.url}locks`);

      const digest = Object.keys(ruby).sort()[0]!;
      const lock = await unique<{ jids: string[]; info: Record<string, unknown>; changelog: number }>(`
        l = SidekiqUniqueJobs::Lock.new(${JSON.stringify(digest)})
        { "jids" => l.locked_jids, "info" => l.info.value, "changelog" => l.changelogs.size }
      `);
      await page.click(`tr[data-digest="${digest}"] td:first-child a`);
      const jids = await page.$$eval("#lock-locked tr[data-jid]", (trs) => trs.map((t) => t.getAttribute("data-jid")));
      expect(jids).toEqual(lock.jids);
      expect(await page.textContent("#lock-info")).toContain(String(lock.info.worker));
      expect(await page.$$("#lock-changelog tbody tr")).toHaveLength(lock.changelog);
      if (shots) await page.screenshot({ path: join(SCREENSHOTS, "lock.png"), fullPage: true });

      await page.goto(`${web.url}locks?filter=${encodeURIComponent(digest.slice(-8))}`);
      expect(await page.$$eval("#locks tr[data-digest]", (t) => t.map((r) => r.getAttribute("data-digest")))).toEqual([
        digest,
      ]);
      expect(errors).toEqual([]);
      await page.close();
    });

    it("Delete on a lock in the browser is what the gem then sees, and Ruby can take the lock again", async () => {
      const before = await rubyDigests();
      const { page, errors } = await browser.newPage();
      await page.goto(`${web.url}locks`);
      const digest = Object.keys(before).sort()[0]!;
      await page.click(`tr[data-digest="${digest}"] button[data-action="delete"]`);
      await page.waitForURL(/\/locks$/);
      await page.waitForSelector(`#locks`);
      expect(await page.$$(`tr[data-digest="${digest}"]`)).toHaveLength(0);
      const after = await unique<{ digests: string[]; locked: number }>(`
        { "digests" => SidekiqUniqueJobs::Digests.new.entries.keys,
          "locked" => SidekiqUniqueJobs::Lock.new(${JSON.stringify(digest)}).locked.count }
      `);
      expect(after.digests.sort()).toEqual(
        Object.keys(before)
          .filter((d) => d !== digest)
          .sort(),
      );
      expect(after.locked).toBe(0);
      // The lock is free: Ruby pushing the same job again takes it.
      const again = await unique<string | null>(`
        job = Sidekiq::Queue.new("uq").find { |j| j.item["lock_digest"] == ${JSON.stringify(digest)} }
        job.klass.constantize.perform_async(*job.args)
      `);
      expect(again).toMatch(/^[0-9a-f]{24}$/);

      await page.click('button[data-action="delete-all"]');
      await page.waitForURL(/\/locks$/);
      expect(await rubyDigests()).toEqual({});
      expect(await rubyDigests("ExpiringDigests")).toEqual({});
      expect(errors).toEqual([]);
      await page.close();
    });
  },
  (t) => t.dialect !== 6,
);
