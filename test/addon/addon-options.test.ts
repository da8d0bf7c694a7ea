// The add-ons are turned on and off under the same names from WorkerOptions,
// the command line and a handlers module; what a worker hands back, and the
// one line it logs at start about its add-ons.
import { describe, expect, it } from "vitest";
import { help, run } from "../../src/assembly/worker-command.js";
import { collectHandlers } from "../../src/assembly/migration.js";
import { Worker } from "../../src/assembly/worker.js";
import { startRedis } from "../../harness/redis-server.js";

function captureLogger() {
  const lines: string[] = [];
  const line = (lvl: string) => (m: string, c?: Record<string, unknown>) => {
    lines.push(`${lvl} ${m} ${c ? JSON.stringify(c) : ""}`);
  };
  return { lines, debug: line("DEBUG"), info: line("INFO"), warn: line("WARN"), error: line("ERROR") };
}

describe("add-on options", () => {
  it("the worker command's help lists each add-on's flag and --run-without", () => {
    expect(help).toContain("--no-cron");
    expect(help).toContain("--unique-jobs GEM");
    expect(help).toContain("--run-without ADDON");
  });

  it("a bad add-on flag value is named by its flag, before anything connects", async () => {
    await expect(run(["--unique-jobs", "7", "--redis", "redis://127.0.0.1:1"])).rejects.toThrow(
      '--unique-jobs must be 8 or 9 (the gem\'s major version), got "7"',
    );
  });

  it("a bad core value is named by its flag, through the library's own check", async () => {
    await expect(run(["--fetch", "fast", "--redis", "redis://127.0.0.1:1"])).rejects.toThrow(
      '--fetch must be reliable or basic, got "fast"',
    );
  });

  it("a handlers module turns unique-jobs on by exporting its option, and migrate audit sees it", async () => {
    const on = await collectHandlers({ uniqueJobs: { gem: 9 }, default: () => undefined });
    expect(on.uniqueJobs).toBe(true);
    const objectModule = await collectHandlers({ uniqueJobs: true, HardJob: () => 1 });
    expect([...objectModule.classes]).toEqual(["HardJob"]);
    expect(objectModule.uniqueJobs).toBe(true);
    const off = await collectHandlers({ uniqueJobs: false, default: () => undefined });
    expect(off.uniqueJobs).toBeUndefined();
  });

  it("says once started which add-ons run and whose marked jobs are handed back", async () => {
    const server = await startRedis();
    try {
      const url = `${server.url}/0`;
      const logger = captureLogger();
      const w = new Worker({ redis: url, dialect: 8, logger, uniqueJobs: true, queues: ["addon-options"] });
      await w.start();
      await w.stop();
      const line = logger.lines.find((l) => l.startsWith("INFO add-ons:"))!;
      expect(line).toContain("sidekiq-cron, sidekiq-unique-jobs");
      // On unless turned off: the scheduler and the throttles idle while Redis holds none of their keys.
      expect(line).toContain("sidekiq-scheduler");
      expect(line).toContain("sidekiq-throttled");
      expect(line).toContain('"handing_back_jobs_of":["Sidekiq Pro batches"]');

      const plain = captureLogger();
      const off = { cron: false, sidekiqScheduler: false, throttled: false } as const;
      const p = new Worker({ redis: url, dialect: 8, logger: plain, queues: ["addon-options"], ...off });
      await p.start();
      await p.stop();
      const none = plain.lines.find((l) => l.startsWith("INFO add-ons:"))!;
      expect(none).toContain("add-ons: none");
      expect(none).toContain("sidekiq-unique-jobs");

      // A start that fails prints nothing but its error.
      const failed = captureLogger();
      const f = new Worker({ redis: "redis://127.0.0.1:1", connectWaitMs: 50, logger: failed });
      await expect(f.start()).rejects.toThrow();
      await f.stop();
      expect(failed.lines.filter((l) => l.includes("add-ons:"))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  it("the resolved config is frozen, and an option with a value it cannot take is named", () => {
    const w = new Worker({ redis: "redis://127.0.0.1:1", concurrency: 3 });
    expect(Object.isFrozen(w.options)).toBe(true);
    expect(Object.isFrozen(w.options.fetch)).toBe(true);
    expect(w.options.capsules[0]!.concurrency).toBe(3);
    expect(() => new Worker({ redis: "redis://127.0.0.1:1", unknownClass: "skip" as never })).toThrow(
      'unknownClass must be retry, requeue or dead, got "skip"',
    );
    void w.stop();
  });
});
