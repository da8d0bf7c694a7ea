// until_and_while_executing and a job re-run by reliable-fetch recovery: its
// process died mid-job holding the runtime (`:RUN`) lock, after it had let
// go of the queue lock, and a second push with the same arguments took that.
// The re-run must run and release its Config lock; else it is dropped and
// the lock, held by a dead job, turns every later job away for good.
import { describe, expect, it } from "vitest";
import { Client } from "../../src/core/client/client.js";
import type { ServerMiddlewareContext } from "../../src/core/server/processor.js";
import { uniqueJobs, uniqueJobsClient } from "../../src/addons/sidekiq-unique-jobs/index.js";
import { JobRecord } from "../../src/core/wire/job-record.js";
import { quietLogger, useRedis } from "../support/use-redis.js";

const logger = quietLogger as never;

describe("until_and_while_executing re-run after its process died", () => {
  const t = useRedis();

  it("runs under the runtime lock it still holds, releases it, and the next job with its arguments runs", async () => {
    const { redis } = t;
    const client = new Client({ redis, dialect: "8.1.7", validate: false }).use(uniqueJobsClient({ logger }));
    const push = () => client.push({ class: "UawJob", queue: "q", args: ["k"], lock: "until_and_while_executing" });
    const { middleware } = uniqueJobs({ logger });
    const ran: string[] = [];
    const runJob = (raw: string, next: () => Promise<void>) => {
      const job = JobRecord.parse(raw);
      const ctx = { jid: job.getString("jid"), className: "UawJob", queue: "q", job, redis };
      return middleware(ctx as ServerMiddlewareContext, next);
    };
    const a = await push();
    const rawA = (await redis.rpop("queue:q"))!;
    // The first run never finishes: its process is killed mid-job.
    void runJob(rawA, () => new Promise(() => {}));
    await expect.poll(() => redis.hexists(`${JSON.parse(rawA).lock_digest}:RUN:LOCKED`, a!)).toBe(1);
    const b = await push();
    expect(b).not.toBeNull();
    // Recovery brings a back; it runs before b.
    await runJob(rawA, async () => void ran.push("a"));
    await runJob((await redis.rpop("queue:q"))!, async () => void ran.push("b"));
    expect(ran).toEqual(["a", "b"]);
    expect(await redis.zcard("uniquejobs:digests")).toBe(0);
    expect(await redis.keys("uniquejobs:*:LOCKED")).toEqual([]);
    await client.close();
  });
});
