// Logs and events of a Node worker running jobs real Ruby Sidekiq enqueued:
// Sidekiq's start/done/fail lines through a real pino logger (every field
// kept), the job events, error and death handlers, and the CLI's
// --log-format json with a logger exported by the handlers module.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { expect, it } from "vitest";
import { Worker } from "../src/assembly/worker.js";
import type { WorkerEventMap } from "../src/core/server/events.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { startCli } from "./support/cli-process.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

type Line = Record<string, unknown>;

function pinoCapture(): { lines: Line[]; logger: pino.Logger } {
  const lines: Line[] = [];
  const dest = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(l) as Line);
      cb();
    },
  });
  return { lines, logger: pino({ level: "info", base: { app: "billing" } }, dest) };
}

describeEachSidekiq(
  "observability: job logs and events",
  (sk) => {
    it("logs start/done/fail like Sidekiq through pino, emits job events, runs error and death handlers", async () => {
      const { lines, logger } = pinoCapture();
      const events: Array<[keyof WorkerEventMap, string]> = [];
      const errors: string[] = [];
      const deaths: string[] = [];
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: ["obs"],
        concurrency: 3,
        pollIntervalAverage: 1,
        timeout: 5,
        logger,
        errorHandlers: [(e, ctx) => void errors.push(`${ctx.context}: ${(e as Error).message}`)],
        deathHandlers: [(job) => void deaths.push(job.getString("jid")!)],
      });
      w.register("RecordJob", (_args, ctx) => ctx.logger.info("inside the handler", { note: "hi" }));
      w.register("FailJob", () => {
        throw new Error("no luck");
      });
      for (const e of ["job:start", "job:success", "job:failure", "job:retry", "job:dead"] as const)
        w.on(e, (ev) => void events.push([e, ev.jid]));
      // A listener that throws is logged and skipped; the job still finishes.
      w.on("job:success", () => {
        throw new Error("listener bug");
      });
      await w.start();
      try {
        const j = await sk.ruby<{ ok: string; retry: string; dead: string }>(`
        ok = Sidekiq::Client.push("class" => "RecordJob", "queue" => "obs", "args" => [1], "tags" => ["t1", "t2"])
        again = Sidekiq::Client.push("class" => "FailJob", "queue" => "obs", "args" => [], "retry" => 3)
        dead = Sidekiq::Client.push("class" => "FailJob", "queue" => "obs", "args" => [], "retry" => 0)
        {"ok" => ok, "retry" => again, "dead" => dead}
      `);
        await waitFor(
          "three jobs done",
          async () => events.filter(([e]) => e !== "job:start").length >= 5 || undefined,
        );
        // Real Sidekiq sees the outcomes the events reported.
        const sets = await sk.ruby<{ retry: string[]; dead: string[] }>(
          `{"retry" => Sidekiq::RetrySet.new.map(&:jid), "dead" => Sidekiq::DeadSet.new.map(&:jid)}`,
        );
        expect(sets.retry).toEqual([j.retry]);
        expect(sets.dead).toEqual([j.dead]);
        expect(events).toEqual(
          expect.arrayContaining([
            ["job:start", j.ok],
            ["job:success", j.ok],
            ["job:failure", j.retry],
            ["job:retry", j.retry],
            ["job:failure", j.dead],
            ["job:dead", j.dead],
          ]),
        );
        expect(events.filter(([e]) => e === "job:retry" || e === "job:dead")).toHaveLength(2);
        expect(errors.sort()).toEqual(["Job raised exception: no luck", "Job raised exception: no luck"]);
        expect(deaths).toEqual([j.dead]);
        await new Promise((r) => setTimeout(r, 50));
        const forJob = (jid: string) => lines.filter((l) => l.jid === jid);
        const ok = forJob(j.ok);
        expect(ok.map((l) => l.msg)).toEqual(["start", "inside the handler", "done"]);
        for (const l of ok) expect(l).toMatchObject({ app: "billing", class: "RecordJob", tags: ["t1", "t2"] });
        expect(typeof ok[0]!.tid).toBe("string");
        expect(new Set(ok.map((l) => l.tid)).size).toBe(1);
        expect(ok[1]).toMatchObject({ note: "hi" });
        expect(typeof ok[2]!.elapsed).toBe("number");
        expect(forJob(j.dead).map((l) => l.msg)).toEqual(["start", "fail", "Job raised exception"]);
        expect(lines.some((l) => String(l.msg).includes('"job:success" listener threw'))).toBe(true);
      } finally {
        await w.stop();
      }
    });

    it("a logger that throws on every line loses no job", async () => {
      const boom = () => {
        throw new Error("log sink down");
      };
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: ["obs-bad-log"],
        concurrency: 5,
        timeout: 5,
        logger: { debug: boom, info: boom, warn: boom, error: boom },
      });
      let ran = 0;
      w.register("RecordJob", (_args, ctx) => {
        ctx.logger.info("inside");
        ran++;
      });
      w.on("job:success", boom);
      // Counted by queue: this worker's scheduled poller may promote an earlier test's due retry.
      const failedHere = () =>
        sk.ruby<number>(
          `[Sidekiq::RetrySet.new, Sidekiq::DeadSet.new].sum { |set| set.count { |e| e.queue == "obs-bad-log" } }`,
        );
      await w.start();
      try {
        await sk.ruby(
          `Sidekiq::Client.push_bulk("class" => "RecordJob", "queue" => "obs-bad-log", "args" => Array.new(300) { |i| [i] })`,
        );
        await waitFor("300 jobs", async () => ran >= 300 || undefined);
        await new Promise((r) => setTimeout(r, 200));
        expect(ran).toBe(300);
        expect(await failedHere()).toBe(0);
        expect(await sk.redis.llen("queue:obs-bad-log")).toBe(0);
      } finally {
        await w.stop();
      }
    });

    it("the CLI worker writes Sidekiq's JSON lines with --log-format json, or uses the module's exported logger", async () => {
      await sk.redis.del("queue:obs-cli");
      const dir = mkdtempSync(join(tmpdir(), "obs-cli-"));
      const plain = join(dir, "plain.mjs");
      writeFileSync(plain, `export const RecordJob = () => {};\n`);
      const withLogger = join(dir, "logger.mjs");
      const out = join(dir, "pino.ndjson");
      writeFileSync(
        withLogger,
        `import pino from ${JSON.stringify(join(REPO_ROOT, "node_modules", "pino", "pino.js"))};
export const logger = pino({ base: { svc: "cli" } }, pino.destination({ dest: ${JSON.stringify(out)}, sync: true }));
export const RecordJob = () => {};\n`,
      );
      const runOne = async (args: string[], jidsWanted: number): Promise<string> => {
        const cli = startCli(
          ["worker", "-q", "obs-cli", "--redis", sk.url, "--dialect", sk.target.version, ...args],
          {},
        );
        try {
          await sk.ruby(
            `${jidsWanted}.times { |i| Sidekiq::Client.push("class" => "RecordJob", "queue" => "obs-cli", "args" => [i]) }`,
          );
          await waitFor(
            "the CLI worker to drain",
            async () => (await sk.redis.llen("queue:obs-cli")) === 0 || undefined,
            20_000,
            cli.stderr,
          );
          await new Promise((r) => setTimeout(r, 300));
        } finally {
          cli.child.kill("SIGTERM");
          await cli.closed;
        }
        return cli.stderr();
      };
      try {
        const stderr = await runOne(["-r", plain, "--log-format", "json", "--log-level", "info"], 2);
        const json = stderr
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Line);
        const done = json.filter((l) => l.msg === "done");
        expect(done).toHaveLength(2);
        for (const l of done) {
          expect(Object.keys(l)).toEqual(["ts", "pid", "tid", "lvl", "msg", "ctx"]);
          expect(l).toMatchObject({ lvl: "INFO", ctx: { class: "RecordJob" } });
          expect((l.ctx as Line).jid).toMatch(/^[0-9a-f]{24}$/);
        }
        expect(json.some((l) => l.msg === "Bye!")).toBe(true);

        const bad = startCli(["worker", "--log-format", "xml"], {});
        await bad.closed;
        expect(await bad.exited).toBe(2);
        expect(bad.stderr()).toContain("sidekiq-bridge worker: --log-format must be text or json");

        await runOne(["-r", withLogger], 1);
        const { readFileSync } = await import("node:fs");
        const pinoLines = readFileSync(out, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Line);
        expect(pinoLines.filter((l) => l.msg === "done")).toEqual([
          expect.objectContaining({ svc: "cli", class: "RecordJob", level: 30 }),
        ]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
  (t) => t.version.startsWith("8") || t.version.startsWith("7"),
);
