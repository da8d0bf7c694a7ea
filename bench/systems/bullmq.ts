// BullMQ from npm: its Queue (add, addBulk) and Worker, on queue `bench`.
// Drains are staged the BullMQ way: pause the queue, addBulk, and resume()
// releases the jobs to the idle worker at once.
import { Queue } from "bullmq";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { bundle, REPO_ROOT } from "../lib/build.js";
import { Child } from "../lib/child.js";
import type { BenchRedis, QueueFamily, SystemUnderTest, WorkerSpec } from "./types.js";

const JOB_OPTIONS = { removeOnComplete: true } as const;

class BullFamily implements QueueFamily {
  private readonly queue: Queue;

  constructor(r: BenchRedis) {
    const url = new URL(r.url);
    this.queue = new Queue("bench", {
      connection: { host: url.hostname, port: Number(url.port) },
      defaultJobOptions: JOB_OPTIONS,
    });
  }

  private async addMany(n: number, opts: Record<string, number> = {}): Promise<void> {
    for (let s = 0; s < n; s += 1000) {
      const jobs = Array.from({ length: Math.min(1000, n - s) }, (_, k) => ({
        name: "noop",
        data: { i: s + k },
        opts: { ...JOB_OPTIONS, ...opts },
      }));
      await this.queue.addBulk(jobs);
    }
  }

  async stageDrain(n: number): Promise<void> {
    await this.queue.pause();
    await this.addMany(n);
  }

  async triggerDrain(): Promise<void> {
    await this.queue.resume();
  }

  async scheduleBurst(n: number, dueMs: number): Promise<void> {
    const base = Date.now();
    await this.addMany(n, { timestamp: base, delay: Math.max(1, Math.round(dueMs - base)) });
  }

  async pending(): Promise<number> {
    // BullMQ marks a job completed after its processor returns, on the worker's
    // next round trip, so the last jobs counted can still be "active" for a
    // moment: give them a second before calling them left over.
    const deadline = Date.now() + 1000;
    for (;;) {
      const c = await this.queue.getJobCounts("wait", "delayed", "active", "prioritized", "waiting-children");
      const left = Object.values(c).reduce((a, b) => a + b, 0);
      if (left === 0 || left !== c.active || Date.now() > deadline) return left;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}

export class BullMQSystem implements SystemUnderTest {
  readonly id = "bullmq";
  readonly group = "bullmq";
  readonly ours = false;
  private entry = "";
  private version = "";

  get label(): string {
    return `BullMQ ${this.version}`.trim();
  }

  describe(): string {
    return `BullMQ ${this.version} on Node ${process.version} (jobs removeOnComplete: true)`;
  }

  async setup(): Promise<void> {
    this.version = (
      JSON.parse(readFileSync(join(REPO_ROOT, "node_modules/bullmq/package.json"), "utf8")) as { version: string }
    ).version;
    this.entry = await bundle("systems/bullmq-child");
  }

  async teardown(): Promise<void> {}

  family(r: BenchRedis): QueueFamily {
    return new BullFamily(r);
  }

  spawnClient(r: BenchRedis, cpu: number): Child {
    return new Child("bullmq client", [process.execPath, this.entry], {
      cpu,
      env: { BENCH_ROLE: "client", BENCH_REDIS_URL: r.url },
    });
  }

  spawnWorker(r: BenchRedis, spec: WorkerSpec, cpu: number): Child {
    return new Child(`bullmq worker -c ${spec.concurrency}`, [process.execPath, this.entry], {
      cpu,
      env: { BENCH_ROLE: "worker", BENCH_REDIS_URL: r.url, BENCH_CONCURRENCY: String(spec.concurrency) },
    });
  }
}
