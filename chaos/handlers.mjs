// The chaos scenarios' job: ChaosJob sleeps args[0] ms, then records its jid
// in the list `chaos:runs` (so duplicates show as repeated jids).
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // outages are the point of these scenarios

export default (worker) => {
  worker.register("ChaosJob", async ([ms], ctx) => {
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    await redis.rpush("chaos:runs", ctx.jid);
  });
};
