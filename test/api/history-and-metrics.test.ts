// Sidekiq::Stats::History and Sidekiq::Metrics::Query through SidekiqApi, on a
// throwaway redis-server: the daily counters read back per day, and metrics
// written by Stats#flushMetrics in both releases' keys read back as one sum.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { ExecutionStats } from "../../src/core/server/execution-stats.js";
import { profileForVersion } from "../../src/core/wire/dialect.js";

const T = Date.UTC(2026, 1, 5, 8, 3, 30); // 2026-02-05 08:03:30 UTC

let server: RedisServer;
let api: SidekiqApi;

beforeAll(async () => {
  server = await startRedis({ databases: 1 });
  api = new SidekiqApi({ redis: server.url, now: () => T });
});

afterAll(async () => {
  await api?.close();
  await server?.stop();
});

describe("StatsHistory", () => {
  it("reads processed and failed per UTC day, newest first, 0 for a day without a counter", async () => {
    await api.redis.mset(
      "stat:processed:2026-02-05",
      "5",
      "stat:failed:2026-02-04",
      "2",
      "stat:processed:2026-02-03",
      "9",
    );
    expect(await api.history(3).days()).toEqual([
      { date: "2026-02-05", processed: 5, failed: 0 },
      { date: "2026-02-04", processed: 0, failed: 2 },
      { date: "2026-02-03", processed: 9, failed: 0 },
    ]);
    expect(await api.history(2).processed()).toEqual({ "2026-02-05": 5, "2026-02-04": 0 });
    expect(await api.history(1, Date.UTC(2026, 1, 4, 23, 59)).failed()).toEqual({ "2026-02-04": 2 });
  });

  it("refuses what Ruby's History refuses: fewer than 1 day or more than five years", () => {
    expect(() => api.history(0)).toThrow(RangeError);
    expect(() => api.history(5 * 365 + 1)).toThrow(RangeError);
  });
});

describe("MetricsQuery", () => {
  it("adds up what 7.x and 8.x writers flushed for the same minute", async () => {
    for (const version of ["7.3.2", "8.1.7"]) {
      const stats = new ExecutionStats();
      stats.record("HardJob", 40, true);
      stats.record("HardJob", 10, false);
      stats.record("Other", 2000, true);
      await stats.flushMetrics(api.redis, profileForVersion(version), T);
    }
    const query = api.metrics({ now: T + 20_000 });
    const top = await query.topJobs({ period: "1h" });
    expect(top.granularity).toBe("minutely");
    expect(top.buckets).toHaveLength(60);
    const hard = top.jobs.get("HardJob")!;
    expect({ p: hard.p, f: hard.f, ms: hard.ms }).toEqual({ p: 4, f: 2, ms: 80 });
    expect(hard.series.p.at(-1)).toBe(4);
    expect([...(await query.topJobs({ classFilter: "oth" })).jobs.keys()]).toEqual(["Other"]);

    const hourly = await query.topJobs({ period: "24h" });
    expect(hourly.granularity).toBe("hourly");
    expect(hourly.jobs.get("Other")!.ms).toBe(4000);

    const one = await query.forJob("HardJob", { period: "1h" });
    expect([...one.jobs.keys()]).toEqual(["HardJob"]);
    expect(one.jobs.get("HardJob")!.p).toBe(4);
    expect((await query.forJob("Nothing")).jobs.get("Nothing")!.p).toBe(0);

    const histogram = await query.histogram("HardJob", 60);
    expect(histogram[2]).toBe(2); // 40 ms: the 30–45 ms bucket ("45ms"), once per release
    expect(histogram.reduce((a, b) => a + b, 0)).toBe(2);
  });
});
