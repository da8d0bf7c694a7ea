// The soak's jobs: ChaosJob as in every scenario, FlakyJob, which fails its
// first execution (so the retry set and the poller carry it), and SoakCronJob,
// which sidekiq-cron's poller enqueues every minute.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import chaosJobs from "./handlers.mjs";

const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // Redis restarts are part of the soak

export default (worker) => {
  chaosJobs(worker);
  worker.register("FlakyJob", async (_args, ctx) => {
    const retryCount = ctx.record.get("retry_count");
    if (retryCount === undefined) throw new Error("the first run fails, to be retried");
    await redis.rpush("chaos:runs", `${ctx.jid}:${randomBytes(4).toString("hex")}`);
  });
  worker.register("SoakCronJob", async (_args, ctx) => {
    await redis.rpush("soak:cron-runs", ctx.jid);
  });
};
