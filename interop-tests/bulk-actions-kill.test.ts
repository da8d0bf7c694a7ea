// The CLI's bulk actions killed with SIGKILL at random moments, then run again
// to the end: nothing lost, nothing twice, as Ruby's Sidekiq::API counts it
// (RetrySet / ScheduledSet / DeadSet sizes, each queue's jids). And SIGTERM
// stops one after its batch in flight with exit code 3 and a JSON summary.
import { beforeEach, expect, it } from "vitest";
import { startCli } from "./support/cli-process.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

const N = 2000;
const KILLS = 2;

describeEachSidekiq("bulk actions: the CLI killed with -9 mid-way, then run again", (sk) => {
  const env = () => ({ REDIS_URL: sk.url });

  beforeEach(async () => {
    await sk.redis.flushdb();
  });

  /** N jobs in `key`, Ruby's format for the release (scores from now on, so none is due for a poller). */
  async function seed(key: "retry" | "schedule"): Promise<void> {
    await sk.ruby(`
      v8 = Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("8.0")
      t = v8 ? (Time.now.to_f * 1000).to_i : Time.now.to_f
      now = Time.now.to_f
      extra = ${key === "retry" ? `{"failed_at" => t, "error_message" => "x", "error_class" => "E", "retry_count" => 3}` : "{}"}
      Sidekiq.redis do |c|
        c.pipelined do |p|
          ${N}.times { |i| p.zadd(${JSON.stringify(key)}, now + 3600 + i, Sidekiq.dump_json({"retry" => true, "queue" => "kill9_#{i % 2}",
            "class" => "RecordJob", "args" => [i, "x" * 200], "jid" => format("%024x", i), "created_at" => t}.merge(extra))) }
        end
      end
      nil`);
  }

  /** Runs the command, SIGKILLs it once it has moved a random share of what is left; true if it was killed mid-way. */
  async function killMidway(args: string[], remaining: () => Promise<number>): Promise<boolean> {
    const before = await remaining();
    const target = before - Math.floor((0.1 + Math.random() * 0.6) * before);
    const cli = startCli(args, env());
    let killed = false;
    await Promise.race([
      cli.exited,
      waitFor(
        "the bulk action to move some",
        async () => {
          if ((await remaining()) > target) return false;
          killed = cli.child.kill("SIGKILL");
          return true;
        },
        60_000,
        cli.output,
      ),
    ]);
    await cli.closed;
    return killed;
  }

  async function finish(args: string[]): Promise<Record<string, unknown>> {
    const cli = startCli([...args, "--json"], env());
    const code = await cli.exited;
    await cli.closed;
    expect(code, cli.output()).toBe(0);
    return JSON.parse(
      cli
        .output()
        .split("\n")
        .find((l) => l.startsWith("{"))!,
    ) as Record<string, unknown>;
  }

  const expectedJids = Array.from({ length: N }, (_, i) => i.toString(16).padStart(24, "0")).sort();

  for (const [command, key] of [
    ["retries retry", "retry"],
    ["scheduled add-to-queue", "schedule"],
  ] as const) {
    it(`${command} --all: ${KILLS} kill -9 at random moments, then a re-run: every job in its queue once`, async () => {
      await seed(key);
      const args = [...command.split(" "), "--all", "--batch-size", "50"];
      let killedMidway = 0;
      for (let k = 0; k < KILLS; k++) if (await killMidway(args, () => sk.redis.zcard(key))) killedMidway++;
      expect(killedMidway).toBeGreaterThan(0);
      const last = await finish(args);
      expect(last).toMatchObject({ interrupted: false, failed_count: 0, refused: 0 });
      const r = await sk.ruby<{ left: number; jids: string[] }>(`
        {left: Sidekiq::${key === "retry" ? "RetrySet" : "ScheduledSet"}.new.size,
         jids: (0..1).flat_map { |q| Sidekiq::Queue.new("kill9_#{q}").map(&:jid) }}`);
      expect(r.left).toBe(0);
      expect(r.jids).toHaveLength(N);
      expect([...r.jids].sort()).toEqual(expectedJids);
    });
  }

  it(`retries kill --all: SIGTERM stops after a batch with exit 3; ${KILLS} kill -9, then a re-run: every job in the dead set once`, async () => {
    await seed("retry");
    // SIGTERM: the batch in flight completes, then a summary and exit code 3.
    const term = startCli(["retries", "kill", "--all", "--batch-size", "2", "--json"], env());
    await waitFor("a batch to move", async () => (await sk.redis.zcard("retry")) < N, 60_000, term.output);
    term.child.kill("SIGTERM");
    expect(await term.exited, term.output()).toBe(3);
    await term.closed;
    const summary = JSON.parse(
      term
        .output()
        .split("\n")
        .find((l) => l.startsWith("{"))!,
    ) as Record<string, unknown>;
    expect(summary).toMatchObject({ interrupted: true });
    expect(summary.done as number).toBeGreaterThan(0);
    expect((summary.done as number) + (await sk.redis.zcard("retry"))).toBe(N);

    const args = ["retries", "kill", "--all", "--batch-size", "10"];
    for (let k = 0; k < KILLS; k++) await killMidway(args, () => sk.redis.zcard("retry"));
    await finish(args);
    const r = await sk.ruby<{ left: number; jids: string[] }>(
      `{left: Sidekiq::RetrySet.new.size, jids: Sidekiq::DeadSet.new.map(&:jid)}`,
    );
    expect(r.left).toBe(0);
    expect([...r.jids].sort()).toEqual(expectedJids);
  });
});
