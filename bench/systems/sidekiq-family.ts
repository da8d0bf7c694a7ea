// Jobs in Sidekiq's format, shared by every system that reads it (sidekiq-bridge
// and Ruby Sidekiq read the same bytes). Payloads are written once by
// sidekiq-bridge's Client in the 8.1.7 dialect (what Ruby 8.1.7's push_bulk
// writes) into a scratch database, kept as a DUMP, and RESTOREd under
// `bench:staging` before each run; RENAME to `queue:bench` releases them at
// once to workers blocked in BRPOP (Sidekiq's bin/sidekiqload: enqueue first,
// then time the drain).
import { Redis } from "ioredis";
import { Client } from "../../src/core/client/client.js";
import type { BenchRedis, QueueFamily } from "./types.js";

export const QUEUE = "bench";
export const JOB_CLASS = "BenchNoopJob";
const STAGING = "bench:staging";
const SCRATCH_DB = 1;

export class SidekiqFamily implements QueueFamily {
  private dumps = new Map<number, Buffer>();
  private client?: Client;

  constructor(private readonly r: BenchRedis) {}

  private get pushClient(): Client {
    this.client ??= new Client({ redis: this.r.url, dialect: "8.1.7", validate: false });
    return this.client;
  }

  private async dumpFor(n: number): Promise<Buffer> {
    const have = this.dumps.get(n);
    if (have) return have;
    const scratch = new Redis(`${this.r.url}/${SCRATCH_DB}`);
    const client = new Client({ redis: scratch, dialect: "8.1.7", validate: false });
    try {
      await scratch.del(`queue:${QUEUE}`);
      await client.pushBulk({ class: JOB_CLASS, queue: QUEUE, args: Array.from({ length: n }, (_, i) => [i]) });
      const dump = await scratch.dumpBuffer(`queue:${QUEUE}`);
      await scratch.flushdb();
      this.dumps.set(n, dump);
      return dump;
    } finally {
      await client.close();
      scratch.disconnect();
    }
  }

  async stageDrain(n: number): Promise<void> {
    const dump = await this.dumpFor(n);
    await this.r.redis.restore(STAGING, 0, dump, "REPLACE");
  }

  async triggerDrain(): Promise<void> {
    await this.r.redis.rename(STAGING, `queue:${QUEUE}`);
  }

  async scheduleBurst(n: number, dueMs: number): Promise<void> {
    await this.pushClient.pushBulk({
      class: JOB_CLASS,
      queue: QUEUE,
      args: Array.from({ length: n }, (_, i) => [i]),
      at: dueMs / 1000,
      batchSize: 1000,
    });
  }

  async pending(): Promise<number> {
    const [q, s, z] = await Promise.all([
      this.r.redis.llen(`queue:${QUEUE}`),
      this.r.redis.llen(STAGING),
      this.r.redis.zcard("schedule"),
    ]);
    return q + s + z;
  }

  async close(): Promise<void> {
    await this.client?.close();
  }
}
