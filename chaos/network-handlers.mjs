// The network scenarios' job: NetJob records its jid in `chaos:runs` as
// `<jid>:<token>` (a token per execution) on a connection straight to Redis
// (CHAOS_RECORD_URL), past the fault proxy the worker itself goes through, so
// a record measures the worker's recovery, not the handler's own connection.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

const redis = new Redis(process.env.CHAOS_RECORD_URL, { maxRetriesPerRequest: null });
redis.on("error", () => {});

export default (worker) => {
  worker.register("NetJob", async ([ms], ctx) => {
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    await redis.rpush("chaos:runs", `${ctx.jid}:${randomBytes(4).toString("hex")}`);
  });
};
