// `sidekiq-bridge schedule`, `migrate audit` and the dashboard's Recurring Jobs
// tab on schedules the real sidekiq-scheduler wrote (5.0.6 on Sidekiq 6.4,
// 6.0.2 on 7.3 and 8.1), and what Ruby sees after each action. The command
// runs in-process (its `run`), with stdout and stderr captured.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { emptyHandlers } from "../src/tools/migration/audit.js";
import { auditQueues } from "../src/assembly/migration.js";
import { run } from "../src/addons/sidekiq-scheduler/cli-command.js";
import { startWebServer } from "../src/assembly/web.js";
import { describeEachSidekiq } from "./support/harness.js";
import { schedulerRuby } from "./support/scheduler.js";

describeEachSidekiq("sidekiq-scheduler: the schedule command, migrate audit and the Recurring Jobs tab", (sk) => {
  let out = "";
  let err = "";
  beforeEach(() => {
    vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void (out += `${a.join(" ")}\n`));
  });
  afterEach(() => vi.restoreAllMocks());
  const schedule = async (...args: string[]) => {
    out = "";
    err = "";
    const code = await run([...args, "--redis", sk.url]);
    return { code, stdout: out, stderr: err };
  };

  it("list, show, disable, enable and enqueue, each seen by Ruby; the audit names the schedules' queue", async () => {
    const ruby = schedulerRuby(sk);
    const enabled = (name: string) =>
      ruby<boolean>(
        `Sidekiq.reload_schedule!; SidekiqScheduler::Scheduler.instance.job_enabled?(${JSON.stringify(name)})`,
      );
    await ruby(`
      Sidekiq.set_schedule("report", { "cron" => "0 6 * * *", "class" => "ReportJob", "queue" => "sched-audit", "args" => [1, "a"] })
      Sidekiq.set_schedule("old", { "every" => "1h", "class" => "OldJob", "queue" => "sched-audit", "enabled" => false })
      true
    `);
    let r = await schedule("list", "--json");
    expect(r.code, r.stderr).toBe(0);
    const listed = JSON.parse(r.stdout) as { schedules: Array<Record<string, unknown>> };
    expect(listed.schedules.map((s) => [s.name, s.interval, s.class, s.queue, s.enabled])).toEqual([
      ["old", "1h", "OldJob", "sched-audit", false],
      ["report", "0 6 * * *", "ReportJob", "sched-audit", true],
    ]);
    r = await schedule("list");
    expect(r.stdout).toMatch(/report\s+0 6 \* \* \*\s+enabled\s+ReportJob\s+sched-audit/);

    r = await schedule("disable", "report");
    expect(r.code, r.stderr).toBe(0);
    expect(await enabled("report")).toBe(false);
    expect((await schedule("enable", "report")).code).toBe(0);
    expect(await enabled("report")).toBe(true);
    r = await schedule("show", "report", "--json");
    expect(JSON.parse(r.stdout)).toMatchObject({ name: "report", enabled: true, config: { args: [1, "a"] } });

    r = await schedule("enqueue", "report", "--dialect", sk.target.version);
    expect(r.code, r.stderr).toBe(0);
    expect(await ruby<[string, unknown[]]>(`j = Sidekiq::Queue.new("sched-audit").first; [j.klass, j.args]`)).toEqual([
      "ReportJob",
      [1, "a"],
    ]);
    r = await schedule("show", "missing");
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('no schedule "missing"');

    const blocked = (await auditQueues(sk.redis, { queues: ["sched-audit"] })).queues[0]!;
    expect(blocked.verdict).toBe("BLOCKED");
    expect(blocked.reasons).toContainEqual(
      'no Node handler for ReportJob, which sidekiq-scheduler schedule "report" enqueues (0 6 * * *)',
    );
    expect(blocked.warnings).toContainEqual(
      'no Node handler for OldJob of the disabled sidekiq-scheduler schedule "old": enabling it would block',
    );
    const handlers = emptyHandlers();
    handlers.classes.add("ReportJob");
    const ready = (await auditQueues(sk.redis, { handlers })).queues.find((q) => q.queue === "sched-audit")!;
    expect(ready.verdict).toBe("READY");
    expect(ready.warnings).toContainEqual(
      expect.stringMatching(
        /^fed by 1 sidekiq-scheduler schedule\(s\) \(report\): .* only a Node worker's scheduler will/,
      ),
    );
  });

  it("the dashboard's Recurring Jobs tab lists the gem's schedules and toggles them for Ruby", async () => {
    const ruby = schedulerRuby(sk);
    await ruby(`Sidekiq.set_schedule("tab", { "every" => "5m", "class" => "TabJob", "queue" => "sched-tab" }); true`);
    const web = await startWebServer({
      redis: sk.url,
      port: 0,
      apiOptions: { dialect: sk.target.version, apiVersion: sk.target.version },
    });
    try {
      const base = `http://127.0.0.1:${(web.server.address() as { port: number }).port}`;
      const page = await fetch(`${base}/recurring-jobs`);
      expect(page.status).toBe(200);
      const body = await page.text();
      expect(body).toMatch(/<tr data-schedule="tab" data-enabled="true"/);
      const token = /name="authenticity_token" value="([^"]+)"/.exec(body)![1]!;
      const cookie = page.headers.get("set-cookie")!.split(";")[0]!;
      const posted = await fetch(`${base}/recurring-jobs/tab/toggle`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ authenticity_token: token }).toString(),
      });
      expect(posted.status).toBe(303);
      expect(
        await ruby<boolean>(`Sidekiq.reload_schedule!; SidekiqScheduler::Scheduler.instance.job_enabled?("tab")`),
      ).toBe(false);
      expect(await (await fetch(`${base}/recurring-jobs`, { headers: { cookie } })).text()).toMatch(
        /<tr data-schedule="tab" data-enabled="false"/,
      );
    } finally {
      await web.close();
    }
  });
});
