// A worker with dialect "auto" follows the fleet through a rolling deploy: its
// heartbeat and its retries write the oldest live Ruby reader's release, beat
// after beat, not the one it found at start. The Ruby processes here are
// heartbeats written by hand; interop-tests/rolling-upgrade.test.ts runs the
// real releases.
import { afterEach, describe, expect, it } from "vitest";
import { Worker } from "../../src/assembly/worker.js";
import { quietLogger, useRedis } from "../support/use-redis.js";

const t = useRedis();

/** A Ruby process's heartbeat, as the fleet reader (client/fleet.ts) sees it. */
async function rubyProcess(identity: string, version: string): Promise<void> {
  await t.redis.sadd("processes", identity);
  await t.redis.hset(identity, "info", JSON.stringify({ identity, version, labels: [] }));
}
async function rubyLeaves(identity: string): Promise<void> {
  await t.redis.srem("processes", identity);
  await t.redis.del(identity);
}

const beat = (w: Worker) =>
  (w as unknown as { launcher: { heartbeat: { beat(): Promise<void> } } }).launcher.heartbeat.beat();
const ownInfo = async (w: Worker) =>
  JSON.parse((await t.redis.hget(w.identity, "info"))!) as { version: string; capsules?: unknown };

/** Fails one job of `FailJob` and returns the `failed_at` it was retried with. */
async function failOnce(jid: string): Promise<number> {
  const job = { class: "FailJob", queue: "follow", args: [], jid, retry: true, created_at: 1_795_305_965.5 };
  await t.redis.lpush("queue:follow", JSON.stringify(job));
  for (;;) {
    const entry = (await t.redis.zrange("retry", 0, -1)).find((e) => e.includes(`"jid":"${jid}"`));
    if (entry) return (JSON.parse(entry) as { failed_at: number }).failed_at;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("dialect auto follows a rolling deploy", () => {
  let w: Worker | undefined;
  afterEach(async () => {
    await w?.stop();
    await t.redis.flushdb();
  });

  it("keeps the old release's shape while it is live, takes the new one's once it has left", async () => {
    await rubyProcess("ruby-old", "7.3.10");
    w = new Worker({
      redis: t.server.url,
      dialect: "auto",
      autoRefreshMs: 0,
      queues: ["follow"],
      logger: quietLogger,
      scheduler: false,
    });
    w.register("FailJob", () => {
      throw new Error("boom");
    });
    await w.start();
    expect(await ownInfo(w)).toMatchObject({ version: expect.stringMatching(/^7\.3\.10-/) });
    expect(await failOnce("a")).toBeLessThan(1e11); // float seconds

    await rubyProcess("ruby-new", "8.0.10");
    await beat(w);
    expect((await ownInfo(w)).version).toMatch(/^7\.3\.10-/);
    expect((await ownInfo(w)).capsules).toBeUndefined();
    expect(await failOnce("b")).toBeLessThan(1e11);

    await rubyLeaves("ruby-old");
    await beat(w);
    // 8.0.10 launcher.rb:261 writes `capsules`; 8.0.0 writes failed_at in integer milliseconds.
    expect((await ownInfo(w)).version).toMatch(/^8\.0\.10-/);
    expect((await ownInfo(w)).capsules).toBeDefined();
    const failedAt = await failOnce("c");
    expect(Number.isInteger(failedAt) && failedAt > 1e11).toBe(true);

    // The last Ruby process gone: Node alone keeps the dialect it had.
    await rubyLeaves("ruby-new");
    await beat(w);
    expect((await ownInfo(w)).version).toMatch(/^8\.0\.10-/);
  });
});
