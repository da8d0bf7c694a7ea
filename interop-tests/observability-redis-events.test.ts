// The worker's `redis:lost` and `redis:regained` events against a Redis this
// test starts itself (and stops, and starts again on the same port): lost
// fires once however long the outage lasts, regained once when Redis is back,
// the metrics gauge follows, and afterwards a job real Ruby Sidekiq enqueues
// is run by the Node worker, as Ruby's Sidekiq API then reports.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort, type RedisServer, startRedis } from "../harness/redis-server.js";
import { instrumentWorker } from "../src/tools/metrics/prometheus.js";
import type { Logger } from "../src/core/logging/logger.js";
import { Worker } from "../src/assembly/worker.js";
import { beatNow, describeEachSidekiq, waitFor } from "./support/harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = (l: string) => (m: string, ctx?: Record<string, unknown>) =>
    lines.push(`${l} ${m}${ctx ? ` ${JSON.stringify(ctx)}` : ""}`);
  return { logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") }, lines };
}

describeEachSidekiq("observability: Redis lost and regained events", (sk) => {
  // This test's own Redis: only it is stopped and started again.
  let server: RedisServer | undefined;
  let port: number;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-redis-events-"));
    port = await freePort();
    server = await startRedis({ port, dir });
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("redis:lost fires once while Redis is down, redis:regained once when it is back, then a job Ruby enqueues runs in Node", async () => {
    const url = `redis://127.0.0.1:${port}/0`;
    const rubyEnv = { REDIS_URL: url };
    const { logger, lines } = memoryLogger();
    const w = new Worker({
      redis: url,
      dialect: sk.target.version,
      queues: ["events-q"],
      concurrency: 2,
      timeout: 2,
      logger,
    });
    const events: string[] = [];
    const lostErrors: unknown[] = [];
    w.on("redis:lost", (e) => {
      events.push("lost");
      lostErrors.push(e.error);
    });
    w.on("redis:regained", () => events.push("regained"));
    const ran: unknown[][] = [];
    w.register("RecordJob", (args) => void ran.push(args));
    const registry = await instrumentWorker(w, { registry: new Registry() });
    const connected = async () => (await registry.getSingleMetric("sidekiq_redis_connected")!.get()).values[0]?.value;
    try {
      await w.start();
      expect(events).toEqual([]);
      expect(await connected()).toBe(1);

      await server!.stop();
      server = undefined;
      await waitFor("redis:lost", async () => events.length > 0, 10_000);
      // ioredis retries many times meanwhile: still one event.
      await sleep(3000);
      expect(events).toEqual(["lost"]);
      // A Redis that shuts down closes the socket cleanly: the error is there only when one was seen.
      expect(lostErrors[0] === undefined || lostErrors[0] instanceof Error).toBe(true);
      expect(await connected()).toBe(0);

      server = await startRedis({ port, dir });
      await waitFor("redis:regained", async () => events.length > 1, 20_000);
      await sleep(500);
      expect(events).toEqual(["lost", "regained"]);
      expect(await connected()).toBe(1);

      // Real Ruby Sidekiq enqueues on the Redis that came back; the Node worker runs it.
      const jid = await sk.ruby<string>(
        `Sidekiq::Client.push("class" => "RecordJob", "queue" => "events-q", "args" => [42, "after the outage"])`,
        rubyEnv,
      );
      expect(jid).toMatch(/^[0-9a-f]{24}$/);
      await waitFor("the job to run in Node", async () => ran.length > 0, 20_000);
      expect(ran).toEqual([[42, "after the outage"]]);
      await beatNow(w);
      const seen = await sk.ruby<{ size: number; processed: number; failed: number; nodeProcesses: number }>(
        `stats = Sidekiq::Stats.new
         { size: Sidekiq::Queue.new("events-q").size, processed: stats.processed, failed: stats.failed,
           nodeProcesses: Sidekiq::ProcessSet.new.count { |p| p["queues"] == ["events-q"] } }`,
        rubyEnv,
      );
      expect(seen).toEqual({ size: 0, processed: 1, failed: 0, nodeProcesses: 1 });
      expect(events).toEqual(["lost", "regained"]);
      // The outage is told, not thrown: no listener error, nothing logged at error level.
      expect(lines.filter((l) => l.startsWith("error "))).toEqual([]);
    } finally {
      await w.stop();
    }
  }, 90_000);
});
