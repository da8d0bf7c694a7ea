// The fault scenarios of `npm run chaos`, asserted.
import { describe, expect, it } from "vitest";
import { kill9Node, kill9Ruby, redisFreeze, redisRestart, sentinelFailover } from "../chaos/scenarios.js";
import { termWithoutRedis } from "../chaos/shutdown-scenarios.js";
import { backend, selected } from "./support/harness.js";

// dist/ (the real binary the scenarios spawn) is built by the interop global setup.
describe("chaos: the Node worker loses nothing", () => {
  it("kill -9 with 5,000 queued and 50 in flight, then a restart: lost 0 (duplicates allowed: at-least-once)", async () => {
    const r = await kill9Node(5000, 50);
    console.log(JSON.stringify(r));
    expect(r.lost).toBe(0);
    expect(r.completed).toBe(5000);
    expect(r.duplicated).toBeLessThanOrEqual(50);
  }, 300_000);

  it("kill -9 while short jobs have a batch fetched ahead (20,000 jobs of 1 ms, concurrency 10), then a restart: lost 0", async () => {
    const r = await kill9Node(20_000, 10, 1);
    console.log(JSON.stringify(r));
    expect(r.lost).toBe(0);
    expect(r.completed).toBe(20_000);
    // Rerun at most: the jobs running and those finished but not yet acknowledged.
    expect(r.duplicated).toBeLessThanOrEqual(20);
  }, 300_000);

  it("Redis killed and restarted (AOF, appendfsync always) in the middle of 20,000 jobs: lost 0, the worker recovers by itself", async () => {
    const r = await redisRestart(20_000);
    console.log(JSON.stringify(r));
    expect(r.notes).toBe("worker kept running");
    expect(r.lost).toBe(0);
  }, 300_000);

  it("Redis frozen for 5 s (SIGSTOP/SIGCONT): no crash, lost 0", async () => {
    const r = await redisFreeze(5000, 5);
    console.log(JSON.stringify(r));
    expect(r.notes).toBe("worker kept running");
    expect(r.lost).toBe(0);
  }, 300_000);
});

describe("chaos: TERM while Redis is gone", () => {
  for (const mode of ["stopped", "frozen"] as const) {
    it(`Redis ${mode === "stopped" ? "stopped" : "frozen (SIGSTOP)"} with 10 jobs running, then TERM: exit code 3 within -t + 5 s, one clear line, no stack trace; Redis back, a second worker runs every job: lost 0`, async () => {
      const r = await termWithoutRedis(mode);
      const { log, fullLog, ...rest } = r;
      console.log(JSON.stringify(rest));
      console.log(log);
      expect(r.exitCode).toBe(3);
      expect(r.exitSeconds).toBeLessThan(r.timeoutSeconds + 5);
      expect(r.unhandledErrors).toBe(0);
      expect(r.stackLines).toBe(0);
      expect(log.match(/ERROR [^\n]*: Stopped without Redis/g)).toHaveLength(1);
      expect(log).toMatch(/10 unfinished jobs left in the working lists for recovery/);
      if (mode === "stopped") expect(fullLog.match(/Redis connection lost \(ECONN/g)).toHaveLength(1);
      expect(r.lost).toBe(0);
      expect(r.completed).toBe(10);
      // The first worker's jobs were aborted, not finished: each ran once, in the second.
      expect(r.duplicated).toBe(0);
    }, 300_000);
  }
});

describe("chaos: Redis Sentinel", () => {
  it("SENTINEL FAILOVER to the replica mid-run: client and worker carry on, lost 0", async () => {
    const r = await sentinelFailover("graceful", 10_000);
    console.log(JSON.stringify(r));
    expect(r.notes).toBe("worker kept running");
    expect(r.lost).toBe(0);
  }, 300_000);

  it("master killed mid-run: the worker carries on; what asynchronous replication lost is reported", async () => {
    const r = await sentinelFailover("abrupt", 10_000);
    console.log(JSON.stringify(r));
    expect(r.notes).toMatch(/^worker kept running/);
    expect(r.completed + r.lost).toBe(r.sent); // every job is accounted for, lost ones named
  }, 300_000);
});

const v8 = selected().find((t) => t.dialect === 8);
describe(`chaos: Ruby Sidekiq ${v8?.version ?? "8 (not selected)"}'s basic fetch, side by side`, () => {
  it("kill -9 with 5,000 queued and 50 in flight: the jobs it was running are lost", async (ctx) => {
    if (!v8) return ctx.skip();
    const r = await kill9Ruby(backend(), v8, 5000, 50);
    console.log(JSON.stringify(r));
    // Not a target: the figure users compare with ours. BRPOP loses what was running.
    expect(r.lost).toBeGreaterThan(0);
    expect(r.lost).toBeLessThanOrEqual(50);
  }, 300_000);
});
