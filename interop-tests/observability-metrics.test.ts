// Prometheus metrics: a Node worker's counters and histograms while it drains
// jobs real Ruby enqueued (scraped during the drain), and the fleet gauges
// that `sidekiq-bridge metrics` reads from Redis next to a real Ruby process.
import { createServer } from "node:http";
import { Registry } from "prom-client";
import { expect, it } from "vitest";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import {
  instrumentWorker,
  metricsHandler,
  registerFleetMetrics,
  serveMetrics,
} from "../src/tools/metrics/prometheus.js";
import { Worker } from "../src/assembly/worker.js";
import { freePort } from "../harness/redis-server.js";
import { startCli } from "./support/cli-process.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

/** A sample's value from Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (
      Object.entries(labels).every(([k, v]) => got[k] === v) &&
      Object.keys(got).length === Object.keys(labels).length
    )
      return Number(m[3]);
  }
  return undefined;
}

describeEachSidekiq(
  "observability: Prometheus metrics",
  (sk) => {
    it("counts a drain per class and queue, scraped during the drain, with slots and fetch times", async () => {
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: ["met-a", "met-b"],
        concurrency: 4,
        timeout: 5,
        skipDefaultJobLogging: true,
      });
      let ran = 0;
      w.register("RecordJob", async () => {
        ran++;
        await new Promise((r) => setImmediate(r));
      });
      w.register("FailJob", () => {
        throw new Error("metered failure");
      });
      const registry = await instrumentWorker(w, { registry: new Registry() });
      const server = await serveMetrics({ port: 0 }, registry);
      const port = (server.address() as { port: number }).port;
      const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      await sk.ruby(`
      Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "met-a", "args" => Array.new(2000) { |i| [i] })
      Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "met-b", "args" => Array.new(500) { |i| [i] })
      Sidekiq::Client.push_bulk("class" => "FailJob", "queue" => "met-b", "args" => [[1], [2], [3]], "retry" => 1)
    `);
      await w.start();
      try {
        // Scrape continuously while the drain runs: nothing is lost, counts only grow.
        const during: number[] = [];
        await waitFor(
          "the drain",
          async () => {
            const t = await scrape();
            during.push(sample(t, "sidekiq_jobs_processed_total", { class: "RecordJob", queue: "met-a" }) ?? 0);
            return ran >= 2500 || undefined;
          },
          60_000,
        );
        await new Promise((r) => setTimeout(r, 300));
        for (let i = 1; i < during.length; i++) expect(during[i]!).toBeGreaterThanOrEqual(during[i - 1]!);
        const t = await scrape();
        expect(ran).toBe(2500);
        expect(sample(t, "sidekiq_jobs_processed_total", { class: "RecordJob", queue: "met-a" })).toBe(2000);
        expect(sample(t, "sidekiq_jobs_processed_total", { class: "RecordJob", queue: "met-b" })).toBe(500);
        expect(sample(t, "sidekiq_jobs_processed_total", { class: "FailJob", queue: "met-b" })).toBe(3);
        expect(sample(t, "sidekiq_jobs_failed_total", { class: "FailJob", queue: "met-b" })).toBe(3);
        expect(sample(t, "sidekiq_jobs_retried_total", { class: "FailJob", queue: "met-b" })).toBe(3);
        expect(sample(t, "sidekiq_job_duration_seconds_count", { class: "RecordJob", queue: "met-a" })).toBe(2000);
        expect(sample(t, "sidekiq_busy_slots", { capsule: "default" })).toBe(0);
        expect(sample(t, "sidekiq_free_slots", { capsule: "default" })).toBe(4);
        expect(sample(t, "sidekiq_fetch_duration_seconds_count", { capsule: "default" })).toBeGreaterThan(0);
        expect(sample(t, "sidekiq_redis_connected")).toBe(1);
        expect(await sk.ruby<number>("Sidekiq::RetrySet.new.size")).toBe(3);
        // The mountable handler serves the same text on any node:http server.
        const mounted = createServer(metricsHandler(registry));
        await new Promise<void>((r) => mounted.listen(0, "127.0.0.1", r));
        const res = await fetch(`http://127.0.0.1:${(mounted.address() as { port: number }).port}/anything`);
        expect(res.headers.get("content-type")).toContain("text/plain");
        expect(await res.text()).toContain('sidekiq_jobs_failed_total{class="FailJob",queue="met-b"} 3');
        mounted.close();
      } finally {
        server.close();
        await w.stop();
      }
    });

    it("fleet gauges from Redis next to a real Ruby process: queues, latency, sets, processes by version", async () => {
      await sk.redis.flushdb();
      const ruby = await sk.startSidekiq({ queues: ["met-idle"], concurrency: 1 });
      await sk.ruby(`
      Sidekiq::Client.push("class" => "RecordJob", "queue" => "met-q", "args" => [1], "enqueued_at" => nil)
      Sidekiq::Client.push("class" => "RecordJob", "queue" => "met-q", "args" => [2])
      RecordJob.perform_in(3600, 1)
      Sidekiq::RetrySet.new # touch
      Sidekiq.redis { |c| c.zadd("retry", (Time.now.to_f + 60).to_s, Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "r1", "queue" => "met-q", "retry_count" => 0)) }
      Sidekiq::DeadSet.new.kill(Sidekiq.dump_json("class" => "X", "args" => [], "jid" => "d1", "queue" => "met-q"), notify_failure: false)
    `);
      const api = new SidekiqApi({ redis: sk.url });
      const registry = await registerFleetMetrics(api, { registry: new Registry() });
      try {
        await waitFor("the Ruby heartbeat", async () => (await api.processes.list()).length >= 1 || undefined);
        const scrapedAt = Date.now();
        const t = await registry.metrics();
        expect(sample(t, "sidekiq_redis_up")).toBe(1);
        expect(sample(t, "sidekiq_queue_size", { queue: "met-q" })).toBe(2);
        expect(sample(t, "sidekiq_queue_latency_seconds", { queue: "met-q" })).toBeGreaterThanOrEqual(0);
        expect(sample(t, "sidekiq_scheduled_set_size")).toBe(1);
        expect(sample(t, "sidekiq_retry_set_size")).toBe(1);
        expect(sample(t, "sidekiq_dead_set_size")).toBe(1);
        expect(sample(t, "sidekiq_processes", { version: sk.target.version, runtime: "ruby" })).toBe(1);
        // Ruby's own API agrees on the queue latency (Ruby answers later: its figure has grown since).
        const rubyLatency = await sk.ruby<number>(`Sidekiq::Queue.new("met-q").latency`);
        const grown = (Date.now() - scrapedAt) / 1000;
        const nodeLatency = sample(t, "sidekiq_queue_latency_seconds", { queue: "met-q" })!;
        expect(rubyLatency - nodeLatency).toBeGreaterThanOrEqual(-0.01);
        expect(rubyLatency - nodeLatency).toBeLessThanOrEqual(grown + 0.01);

        // The CLI serves the same gauges, bound to 127.0.0.1.
        const port = await freePort();
        const cli = startCli(["metrics", "--port", String(port), "--redis", sk.url], {});
        try {
          await waitFor(
            "the metrics command to listen",
            async () => cli.stderr().includes("/metrics for") || undefined,
            15_000,
            cli.stderr,
          );
          expect(cli.stderr()).toContain(`http://127.0.0.1:${port}/metrics`);
          const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          expect(sample(text, "sidekiq_queue_size", { queue: "met-q" })).toBe(2);
          expect(sample(text, "sidekiq_processes", { version: sk.target.version, runtime: "ruby" })).toBe(1);
          expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
        } finally {
          cli.child.kill("SIGTERM");
          await cli.closed;
        }
      } finally {
        await api.close();
        await ruby.stop();
      }
    });
  },
  (t) => t.version.startsWith("8") || t.version.startsWith("7"),
);
