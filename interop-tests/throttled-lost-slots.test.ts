// A Node worker (the CLI, its throttle exported by the handlers module)
// killed with kill -9 while its jobs hold sidekiq-throttled
// concurrency slots: nothing gives them back, and the gem's own lost-job
// logic (the concurrency script drops slots past their expiry,
// lost_job_threshold after they were taken) frees them for Ruby. The
// threshold is 4 s here (the gem's default is 900 s).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { observed, THROTTLED_RELEASES, throttledRuby, useRubyThrottledServer } from "./support/throttled.js";

const LOST_AFTER = 4;

/**
 * A handlers module for the real CLI (`sidekiq-bridge worker -r`): it exports
 * ConcurrencyJob's throttle under the add-on's name, as a user's would, and
 * its job records its start (as Ruby's does) and sleeps args[0] s. Written to
 * a temporary folder, so it imports ioredis by path.
 */
const HANDLERS = `
import { Redis } from ${JSON.stringify(join(REPO_ROOT, "node_modules/ioredis/built/index.js"))};
const rec = new Redis(process.env.REDIS_URL);
export const throttled = { classes: { ConcurrencyJob: { concurrency: { limit: 2, ttl: ${LOST_AFTER} } } } };
export default (worker) => {
  worker.register("ConcurrencyJob", async ([seconds], ctx) => {
    const start = { at: Date.now() / 1000, by: "node", jid: ctx.jid, class: "ConcurrencyJob" };
    await rec.rpush("throttled:test:starts", JSON.stringify(start));
    await new Promise((r) => setTimeout(r, Number(seconds) * 1000));
  });
};
`;

describeEachSidekiq(
  "sidekiq-throttled: slots of a killed Node worker",
  (sk) => {
    const ruby = throttledRuby(sk, LOST_AFTER);
    useRubyThrottledServer(sk, LOST_AFTER);

    it("come back through the gem's lost-job expiry: Ruby runs the class once they expire, not before", async () => {
      await sk.redis.flushdb();
      const dir = mkdtempSync(join(tmpdir(), "throttled-handlers-"));
      writeFileSync(join(dir, "handlers.mjs"), HANDLERS);
      const cli = ["--import", "tsx", "src/assembly/main.ts", "worker", "-q", "thrk", "-c", "2"];
      const child = spawn(process.execPath, [...cli, "-r", join(dir, "handlers.mjs"), "--dialect", sk.target.version], {
        cwd: REPO_ROOT,
        env: { ...process.env, REDIS_URL: sk.url },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let log = "";
      child.stdout.on("data", (d) => (log += d));
      child.stderr.on("data", (d) => (log += d));
      try {
        await ruby(`2.times { ConcurrencyJob.set(queue: "thrk").perform_async(60) }`);
        await waitFor(
          "the Node worker to start both",
          async () => (await observed(sk.redis)).starts.length === 2,
          30_000,
          () => log,
        );
        const held = await sk.redis.zrange("throttled:ConcurrencyJob:concurrency.v2", 0, -1, "WITHSCORES");
        const nodeJids = (await observed(sk.redis)).starts.map((s) => s.jid).sort();
        expect(held.filter((_, i) => i % 2 === 0).sort()).toEqual(nodeJids);
        child.kill("SIGKILL");
        await new Promise((r) => child.once("exit", r));
        const expiry = Math.min(Number(held[1]), Number(held[3]));
        await ruby(`2.times { ConcurrencyJob.perform_async(0) }`);
        await waitFor(
          "Ruby to run both",
          async () => (await observed(sk.redis)).starts.filter((s) => s.by === "ruby").length === 2,
          30_000,
        );
        const rubyStarts = (await observed(sk.redis)).starts.filter((s) => s.by === "ruby");
        // Not before the dead slots expired (each taken LOST_AFTER s before its score).
        for (const s of rubyStarts) expect(s.at).toBeGreaterThan(expiry - 0.1);
        // The gem drops an expired slot only when it next checks the class, and
        // Ruby's second job may have taken the slot its first gave back before the
        // later Node slot expired: one more check once both have expired clears them.
        const lastExpiry = Math.max(Number(held[1]), Number(held[3]));
        await waitFor("both Node slots to expire", async () => Number((await sk.redis.time())[0]) > lastExpiry, 30_000);
        await ruby(`ConcurrencyJob.perform_async(0)`);
        await waitFor(
          "Ruby to run a third",
          async () => (await observed(sk.redis)).starts.filter((s) => s.by === "ruby").length === 3,
          30_000,
        );
        const left = await sk.redis.zrange("throttled:ConcurrencyJob:concurrency.v2", 0, -1);
        for (const jid of nodeJids) expect(left).not.toContain(jid);
      } finally {
        child.kill("SIGKILL");
        rmSync(dir, { recursive: true, force: true });
      }
    }, 90_000);
  },
  THROTTLED_RELEASES,
);
