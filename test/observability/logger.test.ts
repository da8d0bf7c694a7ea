// The log formats (Sidekiq's Pretty and JSON formatters), pino-style loggers,
// and loggers or listeners that throw.
import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { WorkerEvents } from "../../src/core/server/events.js";
import { JobLogger } from "../../src/core/logging/job-logger.js";
import { JobWatch } from "../../src/core/server/job-watch.js";
import {
  consoleLogger,
  formatJson,
  formatText,
  MAIN_TID,
  safeLogger,
  toLogger,
  type Logger,
} from "../../src/core/logging/logger.js";
import { JobRecord } from "../../src/core/wire/job-record.js";

const at = new Date("2026-01-02T03:04:05.678Z");

function collect(): { lines: string[]; stream: { write(s: string): boolean } } {
  const lines: string[] = [];
  return { lines, stream: { write: (s: string) => (lines.push(...s.split("\n").filter(Boolean)), true) } };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("log formats", () => {
  it("text is Sidekiq's Pretty line: level, ISO time with ms, pid, tid, context k=v, message", () => {
    const line = formatText(
      "info",
      "done",
      { tid: "abc", class: "HardJob", jid: "j1", tags: ["a", "b"], elapsed: 0.012 },
      false,
      at,
    );
    expect(line).toBe(
      `INFO 2026-01-02T03:04:05.678Z pid=${process.pid} tid=abc class=HardJob jid=j1 tags=a,b elapsed=0.012: done\n`,
    );
    expect(formatText("warn", "x", undefined, true, at)).toBe(
      `\x1b[1;33mWARN \x1b[0m 2026-01-02T03:04:05.678Z pid=${process.pid} tid=${MAIN_TID}: x\n`,
    );
  });

  it("json has Sidekiq's JSON formatter fields: ts, pid, tid, lvl, msg, ctx (ctx only when present)", () => {
    expect(JSON.parse(formatJson("error", "fail", { tid: "t1", class: "C", jid: "j", elapsed: 1.5 }, at))).toEqual({
      ts: "2026-01-02T03:04:05.678Z",
      pid: process.pid,
      tid: "t1",
      lvl: "ERROR",
      msg: "fail",
      ctx: { class: "C", jid: "j", elapsed: 1.5 },
    });
    expect(Object.keys(JSON.parse(formatJson("info", "m", {}, at)))).toEqual(["ts", "pid", "tid", "lvl", "msg"]);
    // A bigint (a 2**64 argument) does not throw.
    expect(formatJson("info", "m", { n: 2n ** 64n }, at)).toContain('"n":"18446744073709551616"');
  });

  it("the console logger filters by level and writes once per turn of the event loop", async () => {
    const { lines, stream } = collect();
    let writes = 0;
    const counted = { write: (s: string) => (writes++, stream.write(s)) };
    const l = consoleLogger({ level: "warn", format: "json", stream: counted });
    l.info("hidden");
    l.debug("hidden");
    l.warn("w1");
    l.error("e1", { a: 1 });
    expect(lines).toEqual([]);
    await tick();
    expect(writes).toBe(1);
    expect(lines.map((s) => (JSON.parse(s) as { msg: string }).msg)).toEqual(["w1", "e1"]);
  });
});

describe("pino and other (obj, msg) loggers", () => {
  it("a real pino instance is called (obj, msg) and keeps every field", async () => {
    const out: Array<Record<string, unknown>> = [];
    const dest = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString().split("\n").filter(Boolean))
          out.push(JSON.parse(l) as Record<string, unknown>);
        cb();
      },
    });
    const p = pino({ level: "debug", base: { service: "billing" } }, dest);
    const events = new WorkerEvents();
    const logger = safeLogger(toLogger(p));
    const jl = new JobWatch({ jobLogger: new JobLogger({ logger }), events, errorHandlers: [], logger });
    const record = JobRecord.parse('{"class":"HardJob","args":[1],"jid":"abc123","queue":"q","bid":"B1","tags":["x"]}');
    const run = jl.start({ jid: "abc123", className: "HardJob", queue: "q", tid: "t9", record });
    run.logger.debug("inside", { step: 2 });
    jl.success(run, 12.4);
    await tick();
    expect(out.map((o) => o.msg)).toEqual(["start", "inside", "done"]);
    expect(out[0]).toMatchObject({
      level: 30,
      service: "billing",
      tid: "t9",
      class: "HardJob",
      jid: "abc123",
      bid: "B1",
      tags: ["x"],
    });
    expect(out[1]).toMatchObject({ level: 20, tid: "t9", jid: "abc123", step: 2 });
    expect(out[2]).toMatchObject({ level: 30, jid: "abc123", elapsed: 0.012 });
  });

  it("a job's log_level above info silences its start and done lines", () => {
    const seen: string[] = [];
    const l: Logger = { debug: () => {}, info: (m) => seen.push(m), warn: () => {}, error: () => {} };
    const jl = new JobWatch({
      jobLogger: new JobLogger({ logger: l }),
      events: new WorkerEvents(),
      errorHandlers: [],
      logger: l,
    });
    const record = JobRecord.parse('{"class":"C","args":[],"jid":"j","log_level":"warn"}');
    jl.success(jl.start({ jid: "j", className: "C", queue: "q", tid: "t", record }), 1);
    expect(seen).toEqual([]);
  });
});

describe("bad loggers and listeners", () => {
  it("a logger that throws is silenced after one note on stderr", () => {
    const thrower: Logger = {
      debug: () => {
        throw new Error("disk full");
      },
      info: () => {
        throw new Error("disk full");
      },
      warn: () => {
        throw new Error("disk full");
      },
      error: () => {
        throw new Error("disk full");
      },
    };
    const l = safeLogger(thrower);
    expect(() => {
      l.info("a");
      l.error("b", { x: 1 });
    }).not.toThrow();
  });

  it("a listener that throws (or rejects) is reported and the next one still runs", async () => {
    const ev = new WorkerEvents();
    const reported: string[] = [];
    ev.onListenerError = (e, name) => reported.push(`${name}: ${(e as Error).message}`);
    const got: string[] = [];
    ev.on("quiet", () => {
      throw new Error("boom");
    });
    ev.on("quiet", () => Promise.reject(new Error("async boom")) as unknown as void);
    ev.on("quiet", () => got.push("second"));
    ev.once("stopping", () => got.push("once"));
    ev.emit("quiet", {});
    ev.emit("stopping", {});
    ev.emit("stopping", {});
    await tick();
    expect(got).toEqual(["second", "once"]);
    expect(reported).toEqual(["quiet: boom", "quiet: async boom"]);
  });

  it("error handlers get (error, { context, job }); one that throws does not stop the others", () => {
    const got: unknown[] = [];
    const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
    const jl = new JobWatch({
      jobLogger: new JobLogger({ logger: quiet }),
      logger: quiet,
      events: new WorkerEvents(),
      errorHandlers: [
        () => {
          throw new Error("reporter down");
        },
        (e, ctx) => {
          got.push([(e as Error).message, ctx.context, (ctx.job as JobRecord).get("jid")]);
        },
      ],
    });
    const record = JobRecord.parse('{"class":"C","args":[],"jid":"j7"}');
    const run = jl.start({ jid: "j7", className: "C", queue: "q", tid: "t", record });
    jl.failure(run, 3, new Error("bad"));
    expect(got).toEqual([["bad", "Job raised exception", "j7"]]);
  });
});
