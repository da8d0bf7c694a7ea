// Node -> Rails: ActiveJob classes of a real Rails 7.2 app (ruby-fixtures/rails-app)
// performed by its Sidekiq 8 worker, with records loaded through GlobalID,
// keywords, a scheduled job, a queue_as proc, records that are gone (discard_on
// and rescue_from ActiveJob::DeserializationError), and a plain Sidekiq job.
import { beforeAll, expect, it } from "vitest";
import { aj } from "../src/core/client/activejob.js";
import { Client } from "../src/core/client/client.js";
import { startWebServer } from "../src/assembly/web.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { RAILS_APP, railsApp, stablePayload } from "./support/rails-app.js";

/** A page's text with the entities both renderers use decoded, tags and runs of spaces collapsed. */
const text = (html: string) =>
  html
    .replace(/<[^>]*>/g, " ")
    .replace(/&(#39|#x27|apos);/g, "'")
    .replace(/&(quot|#34|#x22);/g, '"')
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

interface Seed {
  account: number;
  user: number;
  post: number;
  notify: string;
}

describeEachSidekiq(
  "Rails app: ActiveJob from Node",
  (sk) => {
    const rails = railsApp(sk);
    let seed: Seed;
    let client: Client;
    const user = () => aj.record(RAILS_APP, "User", seed.user);
    const post = () => aj.record(RAILS_APP, "Post", seed.post);

    beforeAll(async () => {
      // One boot for the records and Rails' own NotifyJob payload (queue from its queue_as proc), one for the worker.
      seed = await rails.eval<Seed>(`
        account = Account.create!(name: "Acme")
        user = account.users.create!(email: "ada@acme.test", name: "Ada")
        post = account.posts.create!(title: "Hello")
        NotifyJob.set(wait_until: Time.utc(2031, 5, 6)).perform_later(user, "hi", urgent: true)
        {account: account.id, user: user.id, post: post.id,
         notify: Sidekiq.redis { |r| r.zrange("schedule", 0, 0).first }}
      `);
      client = new Client({ redis: sk.url, dialect: sk.target.version });
      await rails.start(["default", "low", "urgent", "audit"]);
      return () => client.close();
    });

    it("loads a record from its GlobalID and takes keywords; scheduled with set(wait:)", async () => {
      const reindex = client.activeJob("ReindexJob", { timezone: "UTC" });
      const now = await reindex.performLater(post(), aj.kwargs({ force: true }));
      expect(await rails.performed((r) => r.job_id === now.jobId)).toMatchObject({
        title: "Hello",
        account: "Acme", // through the relation: a real record, not a stand-in
        force: true,
        queue: "default",
      });
      const later = await reindex.set({ wait: 1 }).performLater(post());
      expect(
        await sk.redis.zscore(
          "schedule",
          (await sk.redis.zrange("schedule", 0, -1)).find((s) => s.includes(later.jobId))!,
        ),
      ).not.toBeNull();
      expect(await rails.performed((r) => r.job_id === later.jobId)).toMatchObject({ force: false, reindexed: 2 });
    });

    it("writes the queue a queue_as proc picks as Rails does, and the job runs from it", async () => {
      // Its sidekiq_options (retry: 1) too: `contract pull` records them.
      const notify = client.activeJob("NotifyJob", { timezone: "UTC", sidekiqOptions: { retry: 1 } });
      const args = [user(), "hi", aj.kwargs({ urgent: true })] as const;
      const held = await notify
        .set({ queue: "urgent", waitUntil: new Date(Date.UTC(2031, 4, 6)) })
        .performLater(...args);
      const raw = (await sk.redis.zrange("schedule", 0, -1)).find((s) => s.includes(held.jobId))!;
      expect(stablePayload(raw)).toBe(stablePayload(seed.notify));
      const now = await notify.set({ queue: "urgent" }).performLater(...args);
      expect(await rails.performed((r) => r.job_id === now.jobId)).toMatchObject({
        queue: "urgent",
        user: "ada@acme.test",
        account: "Acme",
        urgent: true,
      });
    });

    it("a record that is gone: discarded where the job says discard_on, retried where rescue_from raises again", async () => {
      const gone = await client
        .activeJob("ReindexJob", { timezone: "UTC" })
        .performLater(aj.record(RAILS_APP, "Post", 999_999));
      expect(await rails.performed((r) => r.job_id === gone.jobId)).toMatchObject({
        discarded: "ActiveRecord::RecordNotFound",
      });
      const missing = await client
        .activeJob("NotifyJob", { timezone: "UTC", queue: "low" })
        .performLater(aj.record(RAILS_APP, "User", 999_999), "hi");
      expect(await rails.performed((r) => r.job_id === missing.jobId)).toMatchObject({
        rescued: "ActiveRecord::RecordNotFound",
      });
      // Sidekiq's retry set, as Ruby's API reads it.
      const retry = await waitFor("the retry entry", async () =>
        sk
          .ruby<{ error_class: string; error_message: string; wrapped: string } | null>(
            `
          e = Sidekiq::RetrySet.new.find { |j| j.args[0]["job_id"] == "${missing.jobId}" }
          e && {error_class: e["error_class"], error_message: e["error_message"], wrapped: e.display_class}
        `,
          )
          .then((e) => e ?? undefined),
      );
      expect(retry).toEqual({
        error_class: "ActiveJob::DeserializationError",
        error_message: "Error while trying to deserialize arguments: Couldn't find User with 'id'=\"999999\"",
        wrapped: "NotifyJob",
      });
      // The retries page: Node's dashboard shows what Ruby's Web UI shows for it.
      const web = await startWebServer({ redis: sk.url, port: 0, apiOptions: { apiVersion: sk.target.version } });
      try {
        const node = text(await (await fetch(new URL("retries", web.url))).text());
        const ruby = text(
          await sk.ruby<string>(`
            require "sidekiq/web"
            require "rack/mock"
            Rack::MockRequest.new(Sidekiq::Web.new).get("/retries", "rack.session" => {}).body.to_s
          `),
        );
        for (const page of [node, ruby]) {
          expect(page).toContain("NotifyJob");
          expect(page).toContain(`ActiveJob::DeserializationError: ${retry.error_message}`);
        }
      } finally {
        await web.close();
      }
      const discardedLeftNothing = await sk.ruby<number>(
        `Sidekiq::RetrySet.new.count { |j| j.args[0]["job_id"] == "${gone.jobId}" } + Sidekiq::DeadSet.new.count { |j| j.args[0]["job_id"] == "${gone.jobId}" }`,
      );
      expect(discardedLeftNothing).toBe(0);
    });

    it("performAllLater writes what ActiveJob.perform_all_later writes, per job, and the jobs run", async () => {
      // Rails' own bulk (the adapter's enqueue_all: one push_bulk per class and queue, scheduled ones with `at`),
      // on a queue the worker does not serve, taken out of Redis so that Node's can be read alone.
      const fromRails = await rails.eval<{ queued: string[]; scheduled: string[] }>(`
        post = Post.find(${seed.post})
        ActiveJob.perform_all_later(
          ReindexJob.new(post).set(queue: "bulk"), ReindexJob.new(post, force: true).set(queue: "bulk"),
          ReindexJob.new(post).set(queue: "bulk", wait_until: Time.utc(2031, 5, 6)))
        Sidekiq.redis do |r|
          held = r.zrange("schedule", 0, -1).select { |s| s.include?('"queue":"bulk"') }
          queued = r.lrange("queue:bulk", 0, -1)
          r.del("queue:bulk")
          r.zrem("schedule", held) unless held.empty?
          {queued: queued, scheduled: held}
        end
      `);
      const reindex = client.activeJob("ReindexJob", { timezone: "UTC" });
      const bulk = reindex.set({ queue: "bulk" });
      await bulk.performAllLater([[post()], [post(), aj.kwargs({ force: true })]]);
      await bulk.set({ waitUntil: new Date(Date.UTC(2031, 4, 6)) }).performAllLater([[post()]]);
      const queued = await sk.redis.lrange("queue:bulk", 0, -1);
      const scheduled = (await sk.redis.zrange("schedule", 0, -1)).filter((s) => s.includes('"queue":"bulk"'));
      expect(queued.map(stablePayload)).toEqual(fromRails.queued.map(stablePayload));
      expect(scheduled.map(stablePayload)).toEqual(fromRails.scheduled.map(stablePayload));
      expect(await sk.redis.zscore("schedule", scheduled[0]!)).toBe(String(Date.UTC(2031, 4, 6) / 1000));

      const ran = await reindex.performAllLater([[post()], [post(), aj.kwargs({ force: true })]]);
      expect(ran.every((e) => typeof e.jid === "string")).toBe(true);
      for (const [i, e] of ran.entries())
        expect(await rails.performed((r) => r.job_id === e.jobId)).toMatchObject({ title: "Hello", force: i === 1 });
    });

    it("a plain Sidekiq job of app/sidekiq loads its record by id", async () => {
      const jid = await client.job("AuditWorker", { queue: "audit", retry: 2 }).performAsync(seed.account, "login");
      expect(await rails.performed((r) => r.jid === jid)).toMatchObject({ account: "Acme", action: "login" });
    });
  },
  (t) => t.suite === "forky",
);
