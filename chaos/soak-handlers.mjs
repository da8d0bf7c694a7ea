// The soak's jobs: ChaosJob as in every scenario, FlakyJob, which fails its
// first execution (so the retry set and the poller carry it), and SoakCronJob,
// which sidekiq-cron's poller enqueues every minute. With SOAK_EVENTS_DIR set,
// each handler also appends "<ms> <pid> start|done|raised <jid> ..." to
// node-<pid>.log there: a file, so a job started but never finished stays
// visible across a kill -9 or a Redis outage.
import { randomBytes } from "node:crypto";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import chaosJobs from "./handlers.mjs";

const redis = new Redis(process.env.REDIS_URL, { maxRetriesPerRequest: null });
redis.on("error", () => {}); // Redis restarts are part of the soak

const eventsDir = process.env.SOAK_EVENTS_DIR;
const eventsFile = eventsDir && join(eventsDir, `node-${process.pid}.log`);
const note = (...fields) =>
  eventsFile &&
  appendFileSync(
    eventsFile,
    `${Date.now()} ${process.pid} ${fields.map((f) => String(f).replace(/\s/g, "_").slice(0, 160)).join(" ")}\n`,
  );

/** The worker, with every handler registered through it recording its start and end. */
const recording = (worker) => ({
  register: (name, handler, ...rest) =>
    worker.register(
      name,
      async (args, ctx) => {
        note("start", ctx.jid, name, ctx.queue);
        try {
          const result = await handler(args, ctx);
          note("done", ctx.jid);
          return result;
        } catch (e) {
          note("raised", ctx.jid, e?.name ?? "Error", e?.message ?? e);
          throw e;
        }
      },
      ...rest,
    ),
});

export default (plain) => {
  const worker = recording(plain);
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
