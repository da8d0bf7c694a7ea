// SIGTERM to the real `sidekiq-bridge worker` binary during 200
// in-flight jobs: each one finishes or goes back to its queue; none is lost.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { JobRecord } from "../src/core/wire/index.js";
import { startCli } from "./support/cli-process.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

describeEachSidekiq("server: shutdown of the CLI worker", (sk) => {
  it("SIGTERM during 200 in-flight jobs: all finish or return to their queue, none lost", async () => {
    const c = new Client({ redis: sk.url, dialect: sk.target.version });
    // Half finish within the 3 s timeout, half would take a minute.
    const jids = (await c
      .job("SlowNodeJob", { queue: "slow" })
      .performBulk(Array.from({ length: 200 }, (_, i) => [i % 2 === 0 ? 500 : 60_000]))) as string[];
    await c.close();
    const { child, exited, output } = startCli(
      [
        "worker",
        "-q",
        "slow",
        "-c",
        "200",
        "-t",
        "3",
        "-r",
        "interop-tests/fixtures/slow-handlers.mjs",
        "--dialect",
        sk.target.version,
      ],
      { REDIS_URL: sk.url },
    );
    try {
      await waitFor(
        "all 200 jobs to be fetched",
        async () => ((await sk.redis.llen("queue:slow")) === 0 ? true : undefined),
        30_000,
      );
      await waitFor(
        "the short jobs to finish",
        async () => ((await sk.redis.llen("bridge:finished")) >= 100 ? true : undefined),
        30_000,
      );
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      child.kill("SIGKILL");
    }
    const finished = await sk.redis.lrange("bridge:finished", 0, -1);
    const requeued = (await sk.redis.lrange("queue:slow", 0, -1)).map((raw) => JobRecord.parse(raw).getString("jid")!);
    expect(finished).toHaveLength(100);
    expect(requeued).toHaveLength(100);
    expect(new Set([...finished, ...requeued])).toEqual(new Set(jids));
    expect(output()).toContain("Pushed 100 jobs back to Redis");
    // The heartbeat is cleared: Ruby no longer lists the process.
    expect(await sk.ruby(`Sidekiq::ProcessSet.new.to_a.size`)).toBe(0);
  }, 120_000);
});
