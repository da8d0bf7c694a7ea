// Bulk actions against real Ruby: what they write is what Ruby's own
// RetrySet#retry_all, SortedEntry#add_to_queue and kill_all write, byte for
// byte but for enqueued_at's value (each push's own time), run on a copy of
// the same entries; and a bulk retry racing Ruby's retry_all on the same set
// leaves every job in its queue exactly once, as Ruby's Sidekiq::API reads it.
import { beforeEach, expect, it } from "vitest";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

const RB = `
V8 = Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("8.0")
def ptime(ago = 0) = V8 ? ((Time.now.to_f - ago) * 1000).to_i : Time.now.to_f - ago
`;

/** enqueued_at's value masked, its kind (integer ms or float seconds) kept: each push stamps its own time. */
const masked = (raw: string) =>
  raw.replace(/"enqueued_at":(-?\d+)(\.\d+(?:e[+-]?\d+)?)?/, (_, _i, frac) => `"enqueued_at":${frac ? "F" : "I"}`);

const jidOf = (raw: string) => (JSON.parse(raw) as { jid: string }).jid;

describeEachSidekiq("bulk actions: what Ruby's own actions write, and beside Ruby's retry_all", (sk) => {
  const v8 = sk.target.dialect === 8;
  const api = () => new SidekiqApi({ redis: sk.redis });

  beforeEach(async () => {
    await sk.redis.flushdb();
  });

  /** Every queue's list, by name, as Redis holds it. */
  async function queues(): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const q of (await sk.redis.smembers("queues")).sort()) out.set(q, await sk.redis.lrange(`queue:${q}`, 0, -1));
    return out;
  }

  /** The sets' members with their scores, to put back for Ruby's turn. */
  async function snapshot(key: string): Promise<string[]> {
    return sk.redis.zrange(key, 0, -1, "WITHSCORES");
  }

  async function restore(key: string, flat: string[]): Promise<void> {
    const args: string[] = [];
    for (let i = 0; i < flat.length; i += 2) args.push(flat[i + 1]!, flat[i]!);
    await sk.redis.zadd(key, ...args);
  }

  async function resetQueues(): Promise<void> {
    for (const q of await sk.redis.smembers("queues")) await sk.redis.del(`queue:${q}`);
    await sk.redis.del("queues", "dead");
  }

  it("retry-all, add-to-queue-all and kill-all write Ruby's bytes", async () => {
    // Retries and scheduled jobs of every shape the rewrite touches, written by Ruby.
    await sk.ruby(`${RB}
      t = ptime(60)
      rs = Sidekiq::RetrySet.new
      now = Time.now.to_f
      base = {"retry" => 5, "queue" => "bulk_a", "class" => "RecordJob", "created_at" => t, "enqueued_at" => t,
              "error_message" => "boom \\u2028 é", "error_class" => "RuntimeError", "failed_at" => t, "retried_at" => t}
      counts = [2, 0, nil, :absent, 1.5, 7]
      40.times do |i|
        h = base.merge("args" => [i, 2**64 + i, 1.0, "é", {"k" => [nil, true, 1.25e-5]}], "jid" => SecureRandom.hex(12),
                       "queue" => i.even? ? "bulk_a" : "bulk_b", "custom" => {"x" => 1.5})
        c = counts[i % counts.size]
        h["retry_count"] = c unless c == :absent
        h = h.merge("class" => "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper", "wrapped" => "AjJob") if i % 9 == 0
        rs.schedule(now + 100 + i * 0.25, h)
      end
      20.times { |i| RecordJob.set(queue: i.even? ? "bulk_s" : "bulk_a").perform_in(3600 + i, i, 2**64, 1.0, "é") }
      nil`);
    const retries = await snapshot("retry");
    const scheduled = await snapshot("schedule");
    expect(retries).toHaveLength(80);
    expect(scheduled).toHaveLength(40);

    const a = api();
    expect(await a.retries.bulk("retry", { batchSize: 7 })).toMatchObject({ moved: 40, failed: 0, refused: 0 });
    expect(await a.scheduled.bulk("add-to-queue", { batchSize: 6 })).toMatchObject({ moved: 20, failed: 0 });
    const node = await queues();
    await a.close();

    await resetQueues();
    await restore("retry", retries);
    await restore("schedule", scheduled);
    await sk.ruby(`Sidekiq::RetrySet.new.retry_all; Sidekiq::ScheduledSet.new.to_a.each(&:add_to_queue); nil`);
    const ruby = await queues();

    expect([...node.keys()]).toEqual([...ruby.keys()]);
    expect([...node.keys()]).toEqual(["bulk_a", "bulk_b", "bulk_s"]);
    for (const [q, list] of ruby) {
      const mine = node.get(q)!;
      expect(mine).toHaveLength(list.length);
      // The same payload for each jid, byte for byte but for enqueued_at's value.
      const byJid = new Map(list.map((raw) => [jidOf(raw), masked(raw)]));
      for (const raw of mine) expect(masked(raw), q).toBe(byJid.get(jidOf(raw)));
      // 8.x's retry_all pops lowest score first, as the bulk walk does: the same order.
      if (v8 && q === "bulk_b") expect(mine.map(jidOf)).toEqual(list.map(jidOf));
    }
    expect(masked(node.get("bulk_b")![0]!)).toContain(v8 ? '"enqueued_at":I' : '"enqueued_at":F');

    // kill-all: into the dead set with the bytes unchanged, scored now.
    await resetQueues();
    await sk.redis.del("retry", "schedule");
    await restore("retry", retries);
    const b = api();
    expect(await b.retries.bulk("kill", { batchSize: 9 })).toMatchObject({ moved: 40 });
    await b.close();
    const nodeDead = (await sk.redis.zrange("dead", 0, -1)).sort();
    await sk.redis.del("dead");
    await restore("retry", retries);
    const r = await sk.ruby<{ dead: string[]; now: number; oldest: number }>(`
      Sidekiq::RetrySet.new.kill_all
      ds = Sidekiq::DeadSet.new
      {dead: ds.map(&:value).sort, now: Time.now.to_f, oldest: ds.map(&:score).min}`);
    expect(nodeDead).toEqual(r.dead);
    expect(nodeDead).toEqual(retries.filter((_, i) => i % 2 === 0).sort());
  });

  it("a bulk retry racing Ruby's retry_all: every job in its queue exactly once", async () => {
    const n = 1500;
    await sk.ruby(`${RB}
      t = ptime(60)
      now = Time.now.to_f
      Sidekiq.redis do |c|
        c.pipelined do |p|
          ${n}.times { |i| p.zadd("retry", now + i, Sidekiq.dump_json({"retry" => true, "queue" => "race_#{i % 3}", "class" => "RecordJob",
            "args" => [i], "jid" => format("%024x", i), "created_at" => t, "enqueued_at" => t, "failed_at" => t,
            "error_message" => "x", "error_class" => "E", "retry_count" => 1})) }
        end
      end
      nil`);
    // Ruby pops one at a time (retry_all), each push slowed by a client middleware so
    // the two overlap on a loaded machine too; the bulk starts once Ruby is under way.
    const ruby = sk.ruby<number>(`
      class SlowPush
        def call(*) = (sleep 0.003; yield)
      end
      Sidekiq.configure_client { |c| c.client_middleware { |ch| ch.add SlowPush } }
      Sidekiq::RetrySet.new.retry_all
      Sidekiq::RetrySet.new.size`);
    await waitFor("Ruby's retry_all to start", async () => (await sk.redis.zcard("retry")) < n, 30_000);
    const a = api();
    const s = await a.retries.bulk("retry", { batchSize: 50 });
    await a.close();
    expect(await ruby).toBe(0);
    expect(s.moved).toBeGreaterThan(0);
    expect(s.moved).toBeLessThan(n);
    const seen = await sk.ruby<{ jids: string[]; retry: number; counts: number[] }>(`
      qs = (0..2).map { |q| Sidekiq::Queue.new("race_#{q}") }
      {jids: qs.flat_map { |q| q.map(&:jid) }, retry: Sidekiq::RetrySet.new.size, counts: qs.flat_map { |q| q.map { |j| j["retry_count"] } }.uniq}`);
    expect(seen.retry).toBe(0);
    expect(seen.jids).toHaveLength(n);
    expect(new Set(seen.jids).size).toBe(n);
    expect(seen.counts).toEqual([0]);
  });
});
