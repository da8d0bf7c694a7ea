// Jobs of add-ons a Node worker does not run are never run blindly: a job
// carrying a Sidekiq Pro batch id (`bid`, written here by a real Ruby client
// push) is handed back to its queue, byte for byte, and a real Ruby Sidekiq
// process then runs it; `runWithout` opts out; `migrate audit` blocks such a
// queue and lists top-level keys that no known middleware writes.
import { afterEach, expect, it } from "vitest";
import type { Logger } from "../src/core/logging/logger.js";
import { auditQueues } from "../src/assembly/migration.js";
import { emptyHandlers } from "../src/tools/migration/collect-handlers.js";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const line = (lvl: string) => (m: string, c?: Record<string, unknown>) => {
    lines.push(`${lvl} ${m} ${c ? JSON.stringify(c) : ""}`);
  };
  return { lines, debug: line("DEBUG"), info: line("INFO"), warn: line("WARN"), error: line("ERROR") };
}

describeEachSidekiq("a job of an add-on the Node worker does not run", (sk) => {
  const workers: Worker[] = [];
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });

  const nodeWorker = (queue: string, logger: Logger, runWithout?: string[]) => {
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: [queue],
      timeout: 2,
      logger,
      ...(runWithout ? { runWithout } : {}),
    });
    w.register("RecordJob", async (args, ctx) => {
      await sk.redis.lpush("bridge:node-ran", JSON.stringify({ jid: ctx.jid, args, bid: ctx.record.get("bid") }));
    });
    workers.push(w);
    return w;
  };

  it("a Sidekiq Pro batch job is handed back intact and run by Ruby; with runWithout the Node worker runs it", async () => {
    await sk.redis.flushdb();
    const logger = captureLogger();
    const jid = await sk.ruby<string>(
      `Sidekiq::Client.push("class" => "RecordJob", "args" => [1, "batch"], "queue" => "pb", "bid" => "b-1234")`,
    );
    // Read the pushed bytes before the Node worker starts: a running worker
    // could take the job first.
    const pushed = (await sk.redis.lrange("queue:pb", 0, -1))[0];
    expect(pushed).toContain('"bid":"b-1234"');
    const w = nodeWorker("pb", logger);
    await w.start();
    const handedBack = () => logger.lines.filter((l) => l.includes("Handed back to its queue"));
    await waitFor("the hand-back line", async () => handedBack().length > 0);
    await new Promise((r) => setTimeout(r, 1000));
    await w.stop();
    expect(await sk.redis.llen("bridge:node-ran")).toBe(0);
    expect(handedBack()).toHaveLength(1);
    expect(handedBack()[0]).toContain("a Sidekiq Pro batch id (bid)");
    expect(handedBack()[0]).toContain("RecordJob");
    expect(handedBack()[0]).toContain("--run-without proBatches");
    expect(logger.lines.some((l) => l.includes("add-ons:") && l.includes("Sidekiq Pro batches"))).toBe(true);
    // The job went back as it came: the same bytes, ready for a Ruby process.
    expect(await sk.redis.lrange("queue:pb", 0, -1)).toEqual([pushed]);

    const ruby = await sk.startSidekiq({ queues: ["pb"] });
    try {
      await waitFor("Ruby to run the batch job", async () => (await sk.redis.llen("bridge:received")) === 1);
      const ran = JSON.parse((await sk.redis.lindex("bridge:received", 0))!) as { jid: string; job: { bid?: string } };
      expect(ran.jid).toBe(jid);
      expect(ran.job.bid).toBe("b-1234");
    } finally {
      await ruby.stop();
    }

    // Opting out: Node runs it, and says once what that breaks.
    const runLogger = captureLogger();
    const r = nodeWorker("pb", runLogger, ["proBatches"]);
    await r.start();
    await sk.ruby(`Sidekiq::Client.push("class" => "RecordJob", "args" => [2], "queue" => "pb", "bid" => "b-5678")`);
    await waitFor("Node to run it", async () => (await sk.redis.llen("bridge:node-ran")) === 1);
    const lines = runLogger.lines.filter((l) => l.includes("a Sidekiq Pro batch id"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("Run anyway");
  }, 90_000);

  it("migrate audit blocks a queue of batch jobs and warns about top-level keys no known middleware writes", async () => {
    await sk.redis.flushdb();
    await sk.ruby(`
      Sidekiq::Client.push("class" => "RecordJob", "args" => [1], "queue" => "batched", "bid" => "b-1")
      Sidekiq::Client.push("class" => "RecordJob", "args" => [2], "queue" => "keyed", "sentry_trace" => "abc", "unique_for" => 60)
      Sidekiq::Client.push("class" => "RecordJob", "args" => [3], "queue" => "keyed", "traceparent" => "00-#{"1" * 32}-#{"2" * 16}-01")
      true
    `);
    const handlers = emptyHandlers();
    handlers.classes.add("RecordJob");
    const report = await auditQueues(sk.redis, { handlers });
    const batched = report.queues.find((q) => q.queue === "batched")!;
    expect(batched.verdict).toBe("BLOCKED");
    expect(batched.reasons.join("\n")).toContain("Sidekiq Pro batches (bid)");
    const keyed = report.queues.find((q) => q.queue === "keyed")!;
    expect(keyed.verdict).toBe("READY");
    const warning = keyed.warnings.find((w) => w.includes("top-level keys"));
    // Sidekiq's own keys and the ones known add-ons write (traceparent) are not listed.
    expect(warning).toContain("sentry_trace (1), unique_for (1)");
    expect(warning).not.toContain("traceparent");
    expect(warning).not.toContain("created_at");
  }, 60_000);
});
