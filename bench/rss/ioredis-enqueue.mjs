// The bench's enqueue runs done by ioredis alone, with no sidekiq-bridge
// code: a floor under the enqueuing client's peak RSS for the same work on
// the same node. Each round, as the bench's client: 100,000 jobs 1,000 per
// LPUSH (arguments built first, every jid kept, as push_bulk returns them),
// then 3,000 single pushes with 1 in flight and 10,000 with 50 (SADD queues
// and LPUSH in one pipeline each). Payloads are JSON.stringify of a job of the
// same members. Prints the process's peak RSS (VmHWM) and heap at the end.
//
//   REDIS_URL=redis://127.0.0.1:6379 node bench/rss/ioredis-enqueue.mjs [rounds=6]
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { peakRss } from "./noop-handlers.mjs";

const { Redis } = createRequire(import.meta.url)("ioredis");
const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const rounds = Number(process.argv[2] ?? 6);

const payload = (args) =>
  JSON.stringify({
    retry: true,
    queue: "bench",
    class: "BenchNoopJob",
    args,
    jid: randomBytes(12).toString("hex"),
    created_at: Date.now(),
    enqueued_at: Date.now(),
  });

async function bulk(n) {
  const args = Array.from({ length: n }, (_, i) => [i]);
  const jids = [];
  for (let start = 0; start < n; start += 1000) {
    const list = args.slice(start, start + 1000).map(payload);
    for (const p of list) jids.push(p.slice(p.indexOf('"jid":"') + 7, p.indexOf('"jid":"') + 31));
    await redis
      .pipeline()
      .sadd("queues", "bench")
      .lpush("queue:bench", ...list)
      .exec();
  }
  return jids;
}

async function single(n, inflight) {
  let next = 0;
  const lane = async () => {
    while (next < n)
      await redis
        .pipeline()
        .sadd("queues", "bench")
        .lpush("queue:bench", payload([next++]))
        .exec();
  };
  await Promise.all(Array.from({ length: inflight }, lane));
}

for (let r = 0; r < rounds; r++) {
  const warm = r === 0;
  await redis.del("queue:bench");
  await bulk(warm ? 20_000 : 100_000);
  await redis.del("queue:bench");
  await single(warm ? 1_000 : 3_000, 1);
  await redis.del("queue:bench");
  await single(warm ? 2_000 : 10_000, 50);
}
await redis.del("queue:bench", "queues");
redis.disconnect();
console.log(JSON.stringify(peakRss()));
