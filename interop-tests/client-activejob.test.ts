// A Node-enqueued ActiveJob is performed by a real ActiveJob::Base
// subclass (ruby-fixtures/lib/jobs.rb AjRecordJob) through Sidekiq.
import { expect, it } from "vitest";
import { aj } from "../src/core/client/activejob.js";
import { Client } from "../src/core/client/client.js";
import { JobRecord } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

interface AjReceived {
  class: string;
  job_id: string;
  jid: string;
  args_typed: unknown;
  kw_typed: unknown;
  performed_at: number;
}

describeEachSidekiq(
  "client: ActiveJob from Node",
  (sk) => {
    const byJobId = (id: string, ms = 30_000) =>
      waitFor(
        `ActiveJob ${id} to be performed`,
        async () =>
          (await sk.redis.lrange("bridge:received", 0, -1))
            .map((s) => JSON.parse(s) as AjReceived)
            .find((r) => r.job_id === id),
        ms,
      );

    it("performs with a symbol-keyed hash, keyword arguments and a Time intact; immediate and scheduled", async () => {
      await sk.startSidekiq({ queues: ["default"], concurrency: 3 });
      const client = new Client({ redis: sk.url, dialect: sk.target.version });
      const job = client.activeJob("AjRecordJob");
      const t = new Date(Date.UTC(2023, 10, 14, 22, 13, 20, 123));
      const now = await job.performLater(
        1,
        "s",
        aj.symbolKeys({ sym_key: aj.symbol("sym_val") }),
        { str_key: 1 },
        aj.kwargs({ ts: aj.time(t), big: 1.5 }),
      );
      const want = await sk.ruby<{ args: unknown; kw: unknown; wrapper: string }>(`
        {"args" => Bridge.typed([1, "s", {sym_key: :sym_val}, {"str_key" => 1}]),
         "kw" => Bridge.typed({ts: Time.iso8601("2023-11-14T22:13:20.123000000Z"), big: 1.5}),
         "wrapper" => (defined?(Sidekiq::ActiveJob::Wrapper) ? "Sidekiq::ActiveJob::Wrapper" : "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper")}
      `);
      const got = await byJobId(now.jobId);
      expect(got.args_typed).toEqual(want.args);
      expect(got.kw_typed).toEqual(want.kw);
      expect(got.jid).toBe(now.jid); // provider_job_id is Sidekiq's jid

      const t0 = Date.now() / 1000;
      const later = await job.set({ wait: 3 }).performLater(aj.symbol("later"));
      const raw = (await sk.redis.zrange("schedule", 0, -1)).find((s) => s.includes(later.jobId))!;
      const stored = JobRecord.parse(raw);
      expect(stored.get("class")).toBe(want.wrapper); // the wrapper class this release's adapter defines
      expect(stored.get("wrapped")).toBe("AjRecordJob");
      // The same payload shape the Ruby side's own adapter writes.
      await sk.ruby(`AjRecordJob.set(wait: 3600).perform_later(:x)`);
      const rubyRaw = (await sk.redis.zrange("schedule", 0, -1)).find((s) => !s.includes(later.jobId))!;
      const ruby = JobRecord.parse(rubyRaw);
      expect(stored.keys()).toEqual(ruby.keys());
      expect(Object.keys((stored.get("args") as [Record<string, unknown>])[0])).toEqual(
        Object.keys((ruby.get("args") as [Record<string, unknown>])[0]),
      );
      const ran = await byJobId(later.jobId);
      expect(ran.performed_at - t0).toBeGreaterThanOrEqual(3);
      expect(ran.args_typed).toEqual(await sk.ruby(`Bridge.typed([:later])`));
      await client.close();
    });
  },
  (t) => t.activejob,
);
