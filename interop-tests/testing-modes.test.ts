// The same pushes made by Ruby under Sidekiq's fake mode (`Sidekiq.testing!(:fake)`
// from 8.1, `require "sidekiq/testing"` before) and by Node under
// sidekiq-bridge/testing give the same jobs hashes, jids and times aside; the
// same kind of argument fails the JSON round trip in both, and nothing is
// recorded. Inline mode runs a job a job pushes inside it and raises a job's
// error from the push, in both. Neither side touches Redis.
import { beforeEach, expect, it } from "vitest";
import { clearAll, jobs, testing } from "../src/testing/index.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq } from "./support/harness.js";

/** Ruby: fake mode as the release spells it, and the class the pushes name. */
const RUBY_FAKE = `
  if Sidekiq.respond_to?(:testing!) then Sidekiq.testing!(:fake) else require "sidekiq/testing" end
  Sidekiq.strict_args!
  class FakeHardJob
    include Sidekiq::Job
    sidekiq_options queue: "critical", retry: 3
  end
  Sidekiq::Job.clear_all
`;

/** Per-push fields aside: the jid and the push's times (whether each is there still counts). */
function scrub(list: readonly object[]): unknown[] {
  const perPush = new Set(["jid", "created_at", "enqueued_at"]);
  return list.map((job) => Object.fromEntries(Object.entries(job).map(([k, v]) => [k, perPush.has(k) ? typeof v : v])));
}

describeEachSidekiq("testing modes: Node's fake and inline are Ruby's", (sk) => {
  let client: Client;
  beforeEach(() => {
    clearAll();
    client = new Client({ redis: sk.url, dialect: sk.target.version, strictArgs: "raise" });
  });

  it("plain, scheduled, per-push options and bulk pushes give the same jobs hashes", async () => {
    const ruby = await sk.ruby<object[]>(`${RUBY_FAKE}
      FakeHardJob.perform_async(1, "two", {"three" => [3.5], "four" => nil})
      FakeHardJob.perform_at(1_900_000_000.25, "later")
      FakeHardJob.set(queue: "low", retry: false, tags: ["a"]).perform_async(2)
      Sidekiq::Client.push_bulk("class" => "BulkJob", "args" => [[1], [2]])
      Sidekiq::Client.push_bulk("class" => "BulkJob", "args" => [[3]], "at" => 1_900_000_001)
      Sidekiq::Job.jobs
    `);
    const hard = client.unchecked.job("FakeHardJob", { queue: "critical", retry: 3 });
    await hard.performAsync(1, "two", { three: [3.5], four: null });
    await hard.performAt(1_900_000_000.25, "later");
    await hard.set({ queue: "low", retry: false, tags: ["a"] }).performAsync(2);
    await client.pushBulk({ class: "BulkJob", args: [[1], [2]] });
    await client.pushBulk({ class: "BulkJob", args: [[3]], at: 1_900_000_001 });

    expect(ruby).toHaveLength(6);
    expect(scrub(jobs())).toEqual(scrub(ruby));
  });

  it("an argument that is no JSON fails in both, and nothing is recorded", async () => {
    const ruby = await sk.ruby<{ error: string; size: number }>(`${RUBY_FAKE}
      begin
        FakeHardJob.perform_async(Time.now)
        {"error" => "none", "size" => Sidekiq::Job.jobs.size}
      rescue ArgumentError => e
        {"error" => e.message, "size" => Sidekiq::Job.jobs.size}
      end
    `);
    const node = await client.unchecked
      .job("FakeHardJob")
      .performAsync(new Date() as never)
      .then(
        () => "none",
        (e: Error) => e.message,
      );
    const refusal = "Job arguments to FakeHardJob must be native JSON types";
    expect(ruby.error).toContain(refusal);
    expect(node).toContain(refusal);
    expect(ruby.size).toBe(0);
    expect(jobs()).toHaveLength(0);
  });

  it("inline mode: a job pushed by a job runs inside it, and a job's error comes out of the push", async () => {
    const ruby = await sk.ruby<{ order: string[]; error: string; size: number }>(`
      if Sidekiq.respond_to?(:testing!) then Sidekiq.testing!(:inline) else require "sidekiq/testing"; Sidekiq::Testing.inline! end
      $order = []
      class InlineChainJob
        include Sidekiq::Job
        def perform(n)
          $order << "start #{n}"
          InlineChainJob.perform_async(n - 1) if n > 0
          $order << "end #{n}"
        end
      end
      class InlineBadJob
        include Sidekiq::Job
        def perform = raise("boom")
      end
      InlineChainJob.perform_async(2)
      error = begin; InlineBadJob.perform_async; "none"; rescue => e; e.message; end
      {"order" => $order, "error" => error, "size" => Sidekiq::Job.jobs.size}
    `);
    const order: string[] = [];
    const worker = new Worker({ redis: sk.url, logger: { debug() {}, info() {}, warn() {}, error() {} } });
    worker.register("InlineChainJob", async ([n]) => {
      order.push(`start ${String(n)}`);
      if (Number(n) > 0) await client.unchecked.job("InlineChainJob").performAsync(Number(n) - 1);
      order.push(`end ${String(n)}`);
    });
    worker.register("InlineBadJob", () => {
      throw new Error("boom");
    });
    const error = await testing("inline", worker, async () => {
      await client.unchecked.job("InlineChainJob").performAsync(2);
      return client.unchecked
        .job("InlineBadJob")
        .performAsync()
        .then(
          () => "none",
          (e: Error) => e.message,
        );
    });
    await worker.stop();
    expect(ruby.order).toEqual(["start 2", "start 1", "start 0", "end 0", "end 1", "end 2"]);
    expect({ order, error, size: jobs().length }).toEqual(ruby);
  });
});
