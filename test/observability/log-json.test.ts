// The JSON log line is written member by member, and the job's start, done
// and fail lines from their parts; they must read byte for byte as the
// generic JSON.stringify of tid, msg and the context without tid did, and as
// the text formatter does.
import { describe, expect, it } from "vitest";
import { WorkerEvents } from "../../src/core/server/events.js";
import { JobLogger } from "../../src/core/logging/job-logger.js";
import { JobWatch } from "../../src/core/server/job-watch.js";
import {
  consoleLogger,
  formatJobJson,
  formatJobText,
  formatJson,
  formatText,
  jobLineWriter,
  MAIN_TID,
  safeLogger,
  type LogContext,
  type Logger,
  type LogLevel,
} from "../../src/core/logging/logger.js";
import { JobRecord } from "../../src/core/wire/job-record.js";

const at = new Date("2026-01-02T03:04:05.678Z");
const SEVERITY: Record<LogLevel, string> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" };

/** The formatter as it was: the context copied without tid, then three JSON.stringify. */
function reference(level: LogLevel, msg: string, ctx: LogContext | undefined, now: Date): string {
  const toJson = (v: unknown) => {
    try {
      return JSON.stringify(v);
    } catch {
      return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? x.toString() : x));
    }
  };
  let tid: unknown;
  let rest: LogContext | undefined;
  for (const k in ctx) {
    if (k === "tid") tid = ctx[k];
    else (rest ??= {})[k] = ctx[k];
  }
  const head = `{"ts":"${now.toISOString()}","pid":${process.pid},"tid":${toJson(typeof tid === "string" ? tid : MAIN_TID)},"lvl":"${SEVERITY[level]}","msg":${toJson(msg)}`;
  return rest ? `${head},"ctx":${toJson(rest)}}\n` : `${head}}\n`;
}

const same = (msg: string, ctx: LogContext | undefined, level: LogLevel = "info") =>
  expect(formatJson(level, msg, ctx, at)).toBe(reference(level, msg, ctx, at));

const TRICKY = [
  "",
  'say "hi"',
  "back\\slash",
  "\u0000\u0001\b\t\n\u000b\f\r\u001f",
  "\u007f del",
  "ünïcödé ✓ 日本語",
  "emoji 😀 pair",
  "lone \ud83d high",
  "lone \ude00 low",
  "\u2028\u2029 separators",
  "</script>",
];

describe("JSON lines written member by member, job lines (JSON and text) from their parts", () => {
  it("the job lines (start, done, fail) read as before", () => {
    same("start", { tid: "b4k1", class: "HardJob", jid: "2d0f1c9e6b8a4f3e5d7c9b1a" });
    same("done", { tid: "b4k1", class: "HardJob", jid: "2d0f1c9e6b8a4f3e5d7c9b1a", elapsed: 0.012 });
    same("fail", { tid: "b4k1", class: "HardJob", jid: "j", bid: "b-1", tags: ["a", "b"], elapsed: 0 }, "error");
  });

  it("the fixed-shape job line reads as the generic line of { tid, class, jid, elapsed }", () => {
    for (const s of [...TRICKY, "2d0f1c9e6b8a4f3e5d7c9b1a", "Billing::HardJob"]) {
      for (const elapsed of [undefined, 0, 0.012, 12.5, 1e-7, NaN]) {
        const ctx = elapsed === undefined ? { tid: s, class: s, jid: s } : { tid: s, class: s, jid: s, elapsed };
        expect(formatJobJson(s, s, s, s, elapsed, at)).toBe(reference("info", s, ctx, at));
      }
    }
  });

  it("the fixed-shape job line in text reads as formatText of { tid, class, jid, elapsed }", () => {
    for (const s of [...TRICKY, "Billing::HardJob"]) {
      for (const elapsed of [undefined, 0, -0, 2, 0.012, 12.5, 1e-7, NaN]) {
        for (const color of [false, true]) {
          const ctx = elapsed === undefined ? { tid: s, class: s, jid: s } : { tid: s, class: s, jid: s, elapsed };
          expect(formatJobText(s, s, s, s, elapsed, color, at)).toBe(formatText("info", s, ctx, color, at));
        }
      }
    }
  });

  it.each(["json", "text"] as const)(
    "the job logger writes the same %s lines through the console logger's job lines as through its info",
    async (format) => {
      const lines = async (wrap: "own" | "copy" | "safe") => {
        const out: string[] = [];
        const own = consoleLogger({ level: "info", format, stream: { write: (s: string) => out.push(s) } });
        // A copy is any other logger: it only has info(msg, ctx). The Worker
        // wraps a logger handed in (the CLI's console logger) in safeLogger,
        // which keeps the job lines.
        const logger: Logger = wrap === "copy" ? { ...own } : wrap === "safe" ? safeLogger(own) : own;
        expect(jobLineWriter(logger) !== undefined).toBe(wrap !== "copy");
        const jl = new JobWatch({
          jobLogger: new JobLogger({ logger }),
          events: new WorkerEvents(),
          errorHandlers: [],
          logger,
        });
        for (const [i, payload] of [
          '{"class":"Hard\\"Job","jid":"j\\u0001","args":[]}',
          '{"class":"TaggedJob","jid":"j2","args":[],"tags":["a"],"bid":"b1"}',
          '{"class":"ÜJob","jid":"j3","args":[]}',
        ].entries()) {
          const record = JobRecord.parse(payload);
          const base = {
            jid: String(record.get("jid")),
            className: String(record.get("class")),
            queue: "q",
            tid: `t${i}`,
            record,
          };
          const run = jl.start(base);
          if (i === 1) jl.failure(run, 1234.4, new Error("x"), false);
          else jl.success(run, i * 7.6);
        }
        await new Promise((r) => setImmediate(r));
        // The time stamp differs between the runs.
        return out.join("").replace(/"ts":"[^"]+"|\d{4}-\d\d-\d\dT[\d:.]+Z/g, "T");
      };
      const fast = await lines("own");
      expect(fast.split("\n")).toHaveLength(7);
      expect(fast).toBe(await lines("copy"));
      expect(await lines("safe")).toBe(fast);
    },
  );

  it("strings that need escaping, as message, tid, key and value", () => {
    for (const s of TRICKY) {
      same(s, { tid: s, class: s, [s || "empty"]: s });
      same("m", { [`k${s}`]: [s, { [s]: s }] });
    }
  });

  it("numbers, booleans, null, undefined, functions, symbols, bigints, dates, toJSON with its key", () => {
    same("n", {
      tid: "t",
      a: 0,
      b: -0,
      c: NaN,
      d: Infinity,
      e: -Infinity,
      f: 1e21,
      g: 5e-7,
      h: 0.1 + 0.2,
      i: -12.5,
      j: true,
      k: false,
      l: null,
      m: undefined,
      n: () => 1,
      o: Symbol("s"),
      p: 2n ** 64n,
      q: { deep: [1n, undefined, () => 1] },
      r: new Date(0),
      s: { toJSON: (key: string) => `key was ${key}` },
      t: { toJSON: () => undefined },
      u: Object(3),
      v: Object("boxed"),
      w: [],
      x: {},
    });
  });

  it("missing, non-string and only tid; empty and absent contexts; undefined-only members", () => {
    same("m", undefined);
    same("m", {});
    same("m", { tid: "only" });
    same("m", { tid: 42, class: "C" });
    same("m", { class: "C" });
    same("m", { a: undefined });
    same("m", { a: undefined, b: 1, c: undefined, d: 2 });
    same("m", { tid: "t", a: () => 1, b: Symbol("x") });
  });

  it("key order (integer-like keys first), inherited enumerable members, a __proto__ member", () => {
    same("m", { tid: "t", z: 1, 2: "two", a: 3, 1: "one" });
    const inherited = Object.create({ fromProto: "p" }) as LogContext;
    inherited.own = 1;
    same("m", inherited);
    // An own "__proto__" member is left out, as the copy into an object left it out on
    // Node: there assigning it set the copy's prototype. Spelled out rather than compared
    // with the copy's result, which is runtime-dependent: Deno has no __proto__ accessor.
    const head = `{"ts":"2026-01-02T03:04:05.678Z","pid":${process.pid},"tid":"t","lvl":"INFO","msg":"m"`;
    const ctx = (json: string) => JSON.parse(json) as LogContext;
    expect(formatJson("info", "m", ctx('{"tid":"t","__proto__":{"x":1},"a":1}'), at)).toBe(`${head},"ctx":{"a":1}}\n`);
    expect(formatJson("info", "m", ctx('{"tid":"t","__proto__":5}'), at)).toBe(`${head},"ctx":{}}\n`);
  });

  it("a BigInt.prototype.toJSON, as some applications install, is honoured as before", () => {
    const proto = BigInt.prototype as unknown as { toJSON?: () => string };
    proto.toJSON = function (this: bigint) {
      return `${this.toString()}n`;
    };
    try {
      same("m", { a: 7n, b: [8n] });
    } finally {
      delete proto.toJSON;
    }
  });

  it("random strings over the characters that need escaping", () => {
    const pool = ['"', "\\", "\u0000", "\n", "\u001f", "a", "é", "\ud83d", "\ude00", "😀", "\u2028", " "];
    let x = 42;
    const rnd = (n: number) => (x = (x * 1103515245 + 12345) % 2 ** 31) % n;
    const str = () => Array.from({ length: rnd(12) }, () => pool[rnd(pool.length)]).join("");
    for (let i = 0; i < 2000; i++)
      same(str(), { tid: str(), class: str(), jid: str(), [str()]: str(), elapsed: i / 1000 });
  });
});
