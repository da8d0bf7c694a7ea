// Client#push and #pushBulk without middleware take fast paths (the pipeline of
// a tick's single pushes, a bulk's shared members encoded once); with a
// middleware that only calls next() they take the general one. Both must put
// the same commands with the same bytes on the wire.
import fc from "fast-check";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { Client } from "../../src/core/client/client.js";
import type { ClientOptions } from "../../src/core/client/client-options.js";
import type { ClientMiddleware } from "../../src/core/client/middleware.js";
import { MiddlewareChain } from "../../src/core/middleware/chain.js";
import { bulkTemplate, fillTemplate, payloadTemplate, type JobHash } from "../../src/core/client/normalize.js";
import { profileForVersion, toRubyJson, type RubyJsonValue } from "../../src/core/wire/index.js";

type Call = unknown[];

/** An ioredis stand-in that records pipelines; `fail(n)` makes the next n execs answer READONLY. */
function stubRedis() {
  const pipelines: Call[][] = [];
  let failures = 0;
  let disconnects = 0;
  const r = Object.create(Redis.prototype) as Redis & Record<string, unknown>;
  r.pipeline = (() => {
    const cmds: Call[] = [];
    const p = {
      sadd: (...a: unknown[]) => (cmds.push(["sadd", ...a]), p),
      lpush: (...a: unknown[]) => (cmds.push(["lpush", ...a]), p),
      zadd: (...a: unknown[]) => (cmds.push(["zadd", ...a]), p),
      exec: async () => {
        if (failures > 0) {
          failures--;
          return cmds.map(() => [new Error("READONLY You can't write against a read only replica."), null]);
        }
        pipelines.push(cmds);
        return cmds.map(() => [null, 1]);
      },
    };
    return p;
  }) as never;
  r.disconnect = (() => void disconnects++) as never;
  return { redis: r, pipelines, fail: (n: number) => void (failures = n), disconnects: () => disconnects };
}

/** Jids and payload times vary between two pushes: replace them by placeholders. */
function scrub(x: unknown): unknown {
  if (typeof x !== "string") return x;
  return x.replace(/"jid":"[0-9a-f]{24}"/g, '"jid":"J"').replace(/"(created_at|enqueued_at)":[-0-9.e+]+/g, '"$1":T');
}
const scrubAll = (p: Call[][]) => p.map((cmds) => cmds.map((c) => c.map(scrub)));

/** What the recorded commands leave in Redis: the `queues` set and each list, head first. */
function stateAfter(p: Call[][]): { queues: string[]; lists: Record<string, string[]> } {
  const queues = new Set<string>();
  const lists: Record<string, string[]> = {};
  for (const [cmd, key, ...vals] of p.flat()) {
    if (cmd === "sadd") for (const v of vals) queues.add(String(v));
    else if (cmd === "lpush") for (const v of vals) (lists[String(key)] ??= []).unshift(String(scrub(v)));
  }
  return { queues: [...queues].sort(), lists };
}

function pair(opts: Partial<ClientOptions>) {
  const a = stubRedis();
  const b = stubRedis();
  const fast = new Client({ validate: false, ...opts, redis: a.redis });
  const general = new Client({ validate: false, ...opts, redis: b.redis, middleware: [(_ctx, next) => next()] });
  return { a, b, fast, general };
}

const arg: fc.Arbitrary<RubyJsonValue> = fc.letrec<{ v: RubyJsonValue }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.bigInt(),
    fc.string(),
    fc.array(tie("v")),
    fc.dictionary(fc.string(), tie("v")),
  ),
})).v;

const option = fc.dictionary(
  fc.constantFrom("retry", "backtrace", "tags", "dead", "retry_queue", "enqueued_at", "custom", "wrapped", "__x", "1"),
  fc.oneof(arg, fc.constant(undefined)),
);
const versions = ["6.4.1", "7.0.0", "7.1.1", "7.1.2", "7.3.2", "8.1.7"];

describe("Client fast paths write what the general path writes", () => {
  it("pushBulk, to a queue and scheduled, for arbitrary jobs and options", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...versions),
        fc.array(fc.array(arg, { maxLength: 3 }), { minLength: 1, maxLength: 7 }),
        option,
        fc.oneof(fc.constant(undefined), fc.double({ min: 1e9, max: 2e9, noNaN: true }), fc.constant("each" as const)),
        fc.integer({ min: 1, max: 4 }),
        async (version, args, opts, atKind, batchSize) => {
          const { a, b, fast, general } = pair({ dialect: version });
          const at = atKind === "each" ? args.map((_, i) => 1.7e9 + i / 3) : atKind;
          const bulk = { ...opts, class: "HardJob", queue: "q1", args, batchSize, ...(at !== undefined ? { at } : {}) };
          const jf = await fast.pushBulk(bulk).catch((e: Error) => e.message);
          const jg = await general.pushBulk(bulk).catch((e: Error) => e.message);
          expect(scrubAll(a.pipelines)).toEqual(scrubAll(b.pipelines));
          if (typeof jf === "string" || typeof jg === "string") return void expect(jf).toEqual(jg);
          expect(jf).toHaveLength(args.length);
          // Each payload carries the jid returned for it.
          const payloads = a.pipelines.flatMap((cmds) =>
            cmds.flatMap((c) => c.filter((x) => typeof x === "string" && x.startsWith("{"))),
          );
          expect(payloads.map((p) => /"jid":"([0-9a-f]{24})"/.exec(p as string)?.[1])).toEqual(jf);
        },
      ),
      { numRuns: 400 },
    );
  });

  it("pushBulk with an explicit jid (one job), and with validation on", async () => {
    for (const version of versions) {
      const { a, b, fast, general } = pair({ dialect: version, validate: true });
      await fast.pushBulk({ class: "HardJob", args: [[1, "two"]], jid: "0123456789abcdef01234567" });
      await general.pushBulk({ class: "HardJob", args: [[1, "two"]], jid: "0123456789abcdef01234567" });
      await fast.pushBulk({ class: "HardJob", args: [[1], [2]], at: 1.8e9 });
      await general.pushBulk({ class: "HardJob", args: [[1], [2]], at: 1.8e9 });
      expect(scrubAll(a.pipelines)).toEqual(scrubAll(b.pipelines));
      expect(String(a.pipelines[0]![1]![2])).toContain('"jid":"0123456789abcdef01234567"');
    }
  });

  it("pushBulk names an encoding error as the general path does, and sends nothing", async () => {
    for (const bad of [
      { args: [[1], [{ ["\ud800"]: 1 }]] },
      { args: [[1]], custom: "\udfff" },
      { args: [[1]], at: NaN },
    ]) {
      const { a, b, fast, general } = pair({ dialect: 8 });
      const ef = await fast.pushBulk({ class: "X", ...bad } as never).catch((e: Error) => e.message);
      const eg = await general.pushBulk({ class: "X", ...bad } as never).catch((e: Error) => e.message);
      expect(ef).toEqual(eg);
      expect(typeof ef).toBe("string");
      expect(a.pipelines).toEqual(b.pipelines);
    }
  });

  it("push: one pipeline per tick leaves what a SADD + LPUSH per job would, in call order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...versions),
        fc.array(fc.array(arg, { maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        option,
        async (version, jobs, opts) => {
          const { a, b, fast, general } = pair({ dialect: version });
          const settle = (p: Promise<string | null>) =>
            p.then(
              (j) => typeof j,
              (e: Error) => e.message,
            );
          const jf = await Promise.all(
            jobs.map((args, i) => settle(fast.push({ ...opts, class: "HardJob", queue: `q${i % 2}`, args }))),
          );
          const jg: string[] = [];
          for (const [args, i] of jobs.map((x, k) => [x, k] as const))
            jg.push(await settle(general.push({ ...opts, class: "HardJob", queue: `q${i % 2}`, args })));
          expect(jf).toEqual(jg);
          expect(a.pipelines.length).toBeLessThanOrEqual(1);
          // The general path is Sidekiq's raw_push per job; the tick's pipeline is
          // push_bulk's shape (one SADD, one LPUSH per queue): the same Redis state.
          expect(b.pipelines.flat().map((c) => c[0])).toEqual(
            b.pipelines.flat().map((_, i) => (i % 2 === 0 ? "sadd" : "lpush")),
          );
          expect(stateAfter(a.pipelines)).toEqual(stateAfter(b.pipelines));
          if (a.pipelines.length === 1)
            expect(a.pipelines[0]!.length).toBe(
              1 + new Set(a.pipelines[0]!.filter((c) => c[0] === "lpush").map((c) => c[1])).size,
            );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("push: after READONLY reconnects once per pipeline and pushes once more; a second failure rejects", async () => {
    const s = stubRedis();
    const c = new Client({ dialect: 8, redis: s.redis });
    s.fail(1);
    const jids = await Promise.all([1, 2, 3].map((i) => c.push({ class: "X", args: [i] })));
    expect(jids).toHaveLength(3);
    expect(s.disconnects()).toBe(1);
    expect(s.pipelines).toHaveLength(1);
    expect(s.pipelines[0]!.map((cmd) => cmd[0])).toEqual(["sadd", "lpush"]);
    expect(s.pipelines[0]![1]!.slice(2).map((j) => (JSON.parse(String(j)) as { args: number[] }).args[0])).toEqual([
      1, 2, 3,
    ]);
    s.fail(2);
    await expect(c.push({ class: "X", args: [] })).rejects.toThrow(/READONLY/);
  });

  it("push: an argument error or encoding error rejects that push only", async () => {
    const s = stubRedis();
    const c = new Client({ dialect: 8, redis: s.redis });
    const r = await Promise.allSettled([
      c.push({ class: "X", args: [1] }),
      c.push({ class: "X", args: [new Date(0)] } as never),
      c.push({ class: "X", args: [{ ["\ud800"]: 1 }] }),
      c.push({ class: "X", args: [2] }),
    ]);
    expect(r.map((x) => x.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect(s.pipelines).toHaveLength(1);
    // One SADD, one LPUSH of the two good jobs.
    expect(s.pipelines[0]!.map((cmd) => [cmd[0], cmd.length])).toEqual([
      ["sadd", 3],
      ["lpush", 4],
    ]);
  });
});

describe("payloadTemplate and bulkTemplate", () => {
  it("fill to toRubyJson of the object with the slot values", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.oneof(arg, fc.constant(undefined))), arg, arg, (base, x, y) => {
        const obj: JobHash = { ...base, args: null, jid: null };
        const filled = Object.assign({ ...obj }, { args: x, jid: y });
        let want: string;
        try {
          want = toRubyJson(filled);
        } catch (e) {
          // Some member cannot be encoded: so the template or a slot value fails too.
          expect(() => fillTemplate(payloadTemplate(obj, ["args", "jid"]), [toRubyJson(x), toRubyJson(y)])).toThrow();
          void e;
          return;
        }
        const t = payloadTemplate(obj, ["args", "jid"]);
        const vals = t.slots.map((k) => toRubyJson(k === "args" ? x : y));
        expect(fillTemplate(t, vals)).toBe(want);
      }),
      { numRuns: 1000 },
    );
  });
  it("drops enqueued_at from scheduled jobs from 7.1.2 on, keeps its place on a queue", () => {
    const normed: JobHash = { retry: true, queue: "q", enqueued_at: 5, class: "X", args: [], jid: "j", created_at: 1 };
    expect(bulkTemplate(normed, true, profileForVersion("7.1.2")).tpl.slots).toEqual(["args", "jid"]);
    expect(bulkTemplate(normed, true, profileForVersion("7.1.1")).tpl.texts.join("|")).toContain('"enqueued_at":5');
    expect(bulkTemplate(normed, false, profileForVersion("8.1.7")).tpl.slots).toEqual(["enqueued_at", "args", "jid"]);
  });
});

describe("the client's middleware chain", () => {
  it("an empty chain reaches the end", async () => {
    const chain = new MiddlewareChain<ClientMiddleware>("client");
    expect(await chain.invoke({ className: "X", job: {}, queue: "q", redis: stubRedis().redis })).toBe(true);
  });
});
