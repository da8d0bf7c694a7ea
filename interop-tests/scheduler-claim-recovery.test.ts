// A Node sidekiq-scheduler killed with SIGKILL between its claim (the gem's
// ZADD to `sidekiq-scheduler:pushed:<name>`) and its push: another Node
// scheduler pushes that trigger exactly once, seen through Sidekiq::Queue and
// the gem's own claim. sidekiq-scheduler, stopped at the same point (its
// enqueue_job raising past handle_errors right after its claim), skips that
// trigger for good. One Sidekiq release: the claim's format is the gem's.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { SidekiqSchedulerPoller } from "../src/addons/sidekiq-scheduler/poller.js";
import { SchedulerApi } from "../src/addons/sidekiq-scheduler/scheduler-api.js";
import { newIdentity } from "../src/core/server/process-info.js";
import { ADDON_CLAIMS } from "../src/core/wire/bridge-keys.js";
import { killClaimPoller, silentLogger } from "./support/claim-poller.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { schedulerRuby } from "./support/scheduler.js";

const CONFIG = { cron: "* * * * * *", class: "SchedClaimJob", queue: "sclaimq", include_metadata: true };

describeEachSidekiq(
  "sidekiq-scheduler: a scheduler killed between its claim and its push",
  (sk) => {
    const ruby = schedulerRuby(sk);
    // How many jobs of the queue were pushed for trigger `second`, and whether the gem's claim holds it.
    const rubyView = (second: number) =>
      ruby<[number, boolean]>(`
        n = Sidekiq::Queue.new("sclaimq").count { |j| j.args.last["scheduled_at"] == ${second} }
        key = SidekiqScheduler::RedisManager.pushed_job_key("claimed")
        [n, Sidekiq.redis { |r| r.zscore(key, "${second}") } != nil]`);

    for (const stage of ["claimed", "prepared"] as const) {
      it(`Node: another Node scheduler pushes the trigger once (killed after it ${stage})`, async () => {
        await sk.redis.flushdb();
        await new SchedulerApi({ redis: sk.redis }).set("claimed", CONFIG);
        const { field } = await killClaimPoller(sk, stage, { CLAIM_KIND: "scheduler" });
        const second = Number(field.split("|").pop());
        expect(await sk.redis.hexists(ADDON_CLAIMS, field)).toBe(1);
        expect(await rubyView(second)).toEqual([0, true]);

        const lines: string[] = [];
        const poller = new SidekiqSchedulerPoller({
          redis: sk.redis,
          client: new Client({ redis: sk.redis, dialect: sk.target.version }),
          logger: silentLogger(lines),
          identity: newIdentity(),
          dynamicEvery: 1,
        });
        await poller.start();
        try {
          await waitFor("the claim to be recovered", async () => (await sk.redis.hexists(ADDON_CLAIMS, field)) === 0);
        } finally {
          await poller.stop();
        }
        expect(lines.some((l) => l.includes(`pushed claimed for ${second}, claimed by dead process`))).toBe(true);
        // Pushed once, and the gem still holds the claim: its own scheduler will not push it again.
        expect(await rubyView(second)).toEqual([1, true]);
        expect(await sk.redis.hlen(ADDON_CLAIMS)).toBe(0);
      }, 30_000);
    }

    it("Ruby: sidekiq-scheduler stopped between its claim and its push skips the trigger", async () => {
      await sk.redis.flushdb();
      const second = Math.floor(Date.now() / 1000) + 5;
      const call = `SidekiqScheduler::Scheduler.new.send(:idempotent_job_enqueue, "claimed", Time.at(${second}), ${JSON.stringify(
        { ...CONFIG, cron: undefined },
      ).replace(/:/g, "=>")})`;
      // An Exception (not a StandardError, which handle_errors would log) right after the claim stands in for a kill.
      const raised =
        await ruby<string>(`SidekiqScheduler::Scheduler.class_eval { def enqueue_job(*) = raise(Exception, "killed") }
        begin; ${call}; "pushed"; rescue Exception => e; e.message; end`);
      expect(raised).toBe("killed");
      // A healthy Ruby scheduler finds the trigger claimed and pushes nothing.
      await ruby(call);
      expect(await rubyView(second)).toEqual([0, true]);
    }, 30_000);
  },
  (t) => t.dialect === 8,
);
