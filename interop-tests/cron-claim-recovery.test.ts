// A Node cron poller killed with SIGKILL between its claim (the gem's
// `:enqueued` ZADD) and its push: another Node poller pushes that fire time
// exactly once, and Ruby sees it through Sidekiq::Queue and the gem's own
// last_enqueue_time. sidekiq-cron's poller, stopped at the same point (its
// push raising right after its claim), skips that fire time for good. One
// Sidekiq release: the claim's format is the gem's, not Sidekiq's.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { CronPoller } from "../src/addons/sidekiq-cron/index.js";
import { newIdentity } from "../src/core/server/process-info.js";
import { ADDON_CLAIMS } from "../src/core/wire/bridge-keys.js";
import { cronRuby } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";
import { killClaimPoller, silentLogger } from "./support/claim-poller.js";

const CREATE = `Sidekiq::Cron::Job.create("name" => "claimed", "cron" => "* * * * *", "class" => "CronClaimJob", "queue" => "claimq", "args" => ["x"])`;

describeEachSidekiq(
  "cron: a poller killed between its claim and its push",
  (sk) => {
    const ruby = cronRuby(sk);
    // A poll 2 s after the next minute: its fire time is that minute.
    const nextMinute = () => Math.ceil(Date.now() / 60_000) * 60_000 + 2_000;
    const rubyView = () =>
      ruby<[number, unknown[], number | null]>(
        `q = Sidekiq::Queue.new("claimq"); t = Sidekiq::Cron::Job.find("claimed").last_enqueue_time; [q.size, q.map(&:args), t && t.to_f]`,
      );

    // A live Node poller (a worker's) polling at `now`.
    const nodePoller = (now: number) =>
      new CronPoller({
        redis: sk.redis,
        client: new Client({ redis: sk.redis, dialect: sk.target.version }),
        logger: silentLogger(),
        identity: newIdentity(),
        namespaces: ["default"],
        now: () => now,
      });

    for (const stage of ["claimed", "prepared"] as const) {
      it(`Node: another Node poller pushes the fire time once (killed after it ${stage})`, async () => {
        await sk.redis.flushdb();
        expect(await ruby<boolean>(CREATE)).toBe(true);
        const now = nextMinute();
        const fireTime = new Date(Math.floor(now / 60_000) * 60_000).toISOString().replace(".000Z", "Z");
        await killClaimPoller(sk, stage, { CLAIM_KIND: "cron", CLAIM_NOW: String(now) });
        // Claimed in the gem's set, not pushed, and in flight.
        expect(await sk.redis.zrange("cron_job:default:claimed:enqueued", 0, -1)).toContain(fireTime);
        expect(await sk.redis.hlen(ADDON_CLAIMS)).toBe(1);
        expect((await rubyView())[0]).toBe(0);

        const poller = nodePoller(now);
        // The recovering poll pushes it; a second poll finds nothing to do.
        expect((await poller.pollOnce()).enqueued).toEqual([]);
        expect((await poller.pollOnce()).enqueued).toEqual([]);
        const [size, args, last] = await rubyView();
        expect(size).toBe(1);
        expect(args).toEqual([["x"]]);
        expect(last).toBeCloseTo(now / 1000, 0);
        expect(await sk.redis.hlen(ADDON_CLAIMS)).toBe(0);
        // The gem's own poller sees the claim and does not push it again.
        await ruby(`Sidekiq::Cron::Job.find("claimed").test_and_enqueue_for_time!(Time.at(${now / 1000}).utc)`);
        expect((await rubyView())[0]).toBe(1);
      }, 30_000);
    }

    it("Ruby: sidekiq-cron's poller stopped between its claim and its push skips the fire time", async () => {
      await sk.redis.flushdb();
      expect(await ruby<boolean>(CREATE)).toBe(true);
      const now = nextMinute();
      const time = `Time.at(${now / 1000}).utc`;
      // enqueue! raising right after the claim stands in for a kill there.
      const raised = await ruby<string>(`Sidekiq::Cron::Job.class_eval { def enqueue!(*) = raise("killed") }
        begin; Sidekiq::Cron::Job.find("claimed").test_and_enqueue_for_time!(${time}); "pushed"; rescue => e; e.message; end`);
      expect(raised).toBe("killed");
      // A healthy Ruby poller, and a Node one, find the fire time claimed: nobody pushes it.
      await ruby(`Sidekiq::Cron::Job.find("claimed").test_and_enqueue_for_time!(${time})`);
      const poller = nodePoller(now);
      expect((await poller.pollOnce()).enqueued).toEqual([]);
      const [size, , last] = await rubyView();
      expect(size).toBe(0);
      expect(last === null || last < now / 1000 - 30).toBe(true);
    }, 30_000);
  },
  (t) => t.dialect === 8,
);
