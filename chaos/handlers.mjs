// The chaos scenarios' job: ChaosJob sleeps args[0] ms, then records its jid
// in the list `chaos:runs` as `<jid>:<token>`, a token per execution: a job
// run twice shows two tokens, while a record that ioredis resent after a
// reconnect (its reply lost) shows the same token twice and is not a re-run.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

// Through Sentinel when the scenario uses it, so records follow the master.
const sentinel = process.env.CHAOS_SENTINEL;
const redis = sentinel
  ? new Redis({
      sentinels: [{ host: sentinel.split(":")[0], port: Number(sentinel.split(":")[1]) }],
      name: "mymaster",
      maxRetriesPerRequest: null,
    })
  : // Straight to Redis where the worker goes through a fault proxy (CHAOS_RECORD_URL).
    new Redis(process.env.CHAOS_RECORD_URL ?? process.env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // outages are the point of these scenarios

export default (worker) => {
  worker.register("ChaosJob", async ([ms], ctx) => {
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    await redis.rpush("chaos:runs", `${ctx.jid}:${randomBytes(4).toString("hex")}`);
  });
};
