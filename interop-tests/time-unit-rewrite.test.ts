// The one rule for moving payload times between units, read back by real
// Sidekiq: float seconds and integer milliseconds convert, and a foreign
// writer's integer seconds (below 1e11) are read as the right date by every
// release after the rewrite, never as January 1970.
import { expect, it } from "vitest";
import { migratePayloadTimes } from "../src/core/wire/time-unit-rewrite.js";
import { describeEachSidekiq } from "./support/harness.js";

describeEachSidekiq("wire: payload times rewritten for the fleet's release, read by Ruby", (sk) => {
  it("integer seconds, float seconds and integer ms all read as the same instant after the rewrite", async () => {
    const secs = Math.floor(Date.now() / 1000) - 3600; // an hour ago
    const payloads = [
      `{"class":"HardJob","args":[1],"queue":"tu","jid":"a00000000000000000000001","created_at":${secs},"enqueued_at":${secs}}`,
      `{"class":"HardJob","args":[2],"queue":"tu","jid":"a00000000000000000000002","created_at":${secs}.5,"enqueued_at":${secs}.5}`,
      `{"class":"HardJob","args":[3],"queue":"tu","jid":"a00000000000000000000003","created_at":${secs}500,"enqueued_at":${secs}500}`,
    ];
    for (const p of payloads) {
      await sk.redis.lpush("queue:tu", migratePayloadTimes(p, sk.target.version).record.toString());
    }
    await sk.redis.sadd("queues", "tu");
    const read = await sk.ruby<Array<[number, number, number]>>(`
      Sidekiq::Queue.new("tu").map { |j| [j.args[0], j.created_at.to_f, j.enqueued_at.to_f] }.sort
    `);
    expect(read.map((r) => r[0])).toEqual([1, 2, 3]);
    for (const [n, created, enqueued] of read) {
      // Within a second of the instant written, whatever unit it was written in.
      expect(Math.abs(created - secs), `job ${n} created_at`).toBeLessThan(1);
      expect(Math.abs(enqueued - secs), `job ${n} enqueued_at`).toBeLessThan(1);
    }
    const latency = await sk.ruby<number>(`Sidekiq::Queue.new("tu").latency`);
    expect(latency).toBeGreaterThan(3590);
    expect(latency).toBeLessThan(3700);
  });
});
