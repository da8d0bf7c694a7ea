// `sidekiq-bridge cron` on jobs the real sidekiq-cron 2.3.1 created, and what
// Ruby sees after each action. The command runs in-process (its `run`), with
// stdout and stderr captured.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { run } from "../src/addons/sidekiq-cron/cli-command.js";
import { emptyHandlers } from "../src/tools/migration/audit.js";
import { auditQueues } from "../src/assembly/migration.js";
import { cronRuby } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";

interface Out {
  code: number;
  stdout: string;
  stderr: string;
}

describeEachSidekiq(
  "cron: sidekiq-bridge cron on the gem's jobs",
  (sk) => {
    let out = "";
    let err = "";
    beforeEach(() => {
      out = "";
      err = "";
      vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
      vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
      vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => void (out += `${a.join(" ")}\n`));
    });
    afterEach(() => vi.restoreAllMocks());
    const cron = async (...args: string[]): Promise<Out> => {
      out = "";
      err = "";
      const code = await run([...args, "--redis", sk.url]);
      return { code, stdout: out, stderr: err };
    };

    it("list, show, disable, enable, enqueue and delete, each seen by Ruby", async () => {
      const ruby = cronRuby(sk);
      await ruby(`
        Sidekiq::Cron::Job.create("name" => "nightly", "cron" => "0 3 * * *", "class" => "NotLoadedJob", "queue" => "cli-cron", "args" => [1])
        Sidekiq::Cron::Job.create("name" => "sync", "namespace" => "ops", "cron" => "*/5 * * * *", "class" => "NotLoadedJob")
        true
      `);
      let r = await cron("list", "--json");
      expect(r.code, r.stderr).toBe(0);
      const listed = JSON.parse(r.stdout) as { jobs: Array<Record<string, unknown>>; unreadable: unknown[] };
      expect(listed.jobs.map((j) => [j.name, j.namespace, j.cron, j.class, j.queue, j.status])).toEqual([
        ["nightly", "default", "0 3 * * *", "NotLoadedJob", "cli-cron", "enabled"],
      ]);
      expect(listed.jobs[0]!.args).toEqual([1]);
      r = await cron("list", "--all-namespaces");
      expect(r.stdout).toMatch(/^NAME\s+NAMESPACE\s+CRON/);
      expect(r.stdout).toContain("sync");
      expect(r.stdout).toContain("ops");

      r = await cron("disable", "nightly");
      expect(r.code).toBe(0);
      expect(await ruby(`Sidekiq::Cron::Job.find("nightly").status`)).toBe("disabled");
      r = await cron("enable", "nightly", "--json");
      expect(JSON.parse(r.stdout)).toEqual({ name: "nightly", namespace: "default", status: "enabled" });
      expect(await ruby(`Sidekiq::Cron::Job.find("nightly").enabled?`)).toBe(true);

      r = await cron("enqueue", "nightly", "--dialect", sk.target.version, "--json");
      expect(r.code, r.stderr).toBe(0);
      const { jid } = JSON.parse(r.stdout) as { jid: string };
      const seen = await ruby<Record<string, unknown>>(`
        job = Sidekiq::Queue.new("cli-cron").first
        {"jid" => job.jid, "args" => job.args, "history" => Sidekiq::Cron::Job.find("nightly").jid_history_from_redis.map { _1["jid"] }}
      `);
      expect(seen).toEqual({ jid, args: [1], history: [jid] });
      r = await cron("show", "nightly", "--json");
      const shown = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(shown.jid_history).toEqual([{ jid, enqueued: expect.stringMatching(/ UTC$/) }]);
      expect(shown.next_enqueue_time).toMatch(/T03:00:00\.000Z$/);

      r = await cron("delete", "sync", "--namespace", "ops");
      expect(r.code).toBe(0);
      expect(await ruby(`Sidekiq::Cron::Job.find("sync", "ops").nil?`)).toBe(true);

      r = await cron("delete", "sync", "--namespace", "ops");
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('no valid cron job "sync" in namespace "ops"');
      r = await cron("frobnicate");
      expect(r.code).toBe(2);
      r = await cron("show");
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("needs the job's NAME");
    });

    it("migrate audit: a queue fed by cron names its jobs, and blocks on a cron class Node cannot run", async () => {
      await cronRuby(sk)(`
        Sidekiq::Cron::Job.create("name" => "report", "cron" => "0 6 * * *", "class" => "ReportJob", "queue" => "cron-audit")
        Sidekiq::Cron::Job.create("name" => "old-report", "cron" => "0 7 * * *", "class" => "OldReportJob", "queue" => "cron-audit", "status" => "disabled")
        true
      `);
      const blocked = (await auditQueues(sk.redis, { queues: ["cron-audit"] })).queues[0]!;
      expect(blocked.verdict).toBe("BLOCKED");
      expect(blocked.reasons).toEqual([
        'no Node handler for ReportJob, which sidekiq-cron job "report" enqueues (0 6 * * *)',
      ]);
      expect(blocked.cron?.map((c) => [c.name, c.className, c.enabled])).toEqual(
        [
          ["old-report", "OldReportJob", false],
          ["report", "ReportJob", true],
        ].sort(),
      );
      const handlers = emptyHandlers();
      handlers.classes.add("ReportJob");
      const ready = (await auditQueues(sk.redis, { handlers })).queues.find((q) => q.queue === "cron-audit")!;
      expect(ready.verdict).toBe("READY");
      expect(ready.warnings).toContainEqual(
        expect.stringMatching(/^fed by 1 sidekiq-cron job\(s\) \(report\): .* only a Node worker's cron poller will/),
      );
      expect(ready.warnings).toContainEqual(expect.stringContaining("OldReportJob of the disabled"));
    });
  },
  (t) => t.dialect !== 6,
);
