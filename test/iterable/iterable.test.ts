import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { arrayEnumerator, type IterableJob } from "../../src/core/iterable/iterable.js";
import { decodeIterationState, encodeIterationState } from "../../src/core/iterable/iterable-state.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { Worker } from "../../src/assembly/worker.js";
import { JobRecord } from "../../src/core/wire/index.js";

describe("it-<jid> fields as Sidekiq's flush_state writes and fetch_previous_iteration_state reads them", () => {
  it("writes ex as an Integer, c as JSON, rt as 0 until a runtime is added, then as a Ruby Float", () => {
    expect(encodeIterationState({ executions: 1, cursor: null, runtime: 0 }, false)).toEqual({
      ex: "1",
      c: "null",
      rt: "0",
    });
    expect(encodeIterationState({ executions: 2, cursor: [7, "b"], runtime: 2 }, true)).toEqual({
      ex: "2",
      c: '[7,"b"]',
      rt: "2.0",
    });
    expect(encodeIterationState({ executions: 2, cursor: 9007199254740993n, runtime: 1e-5 }, true).rt).toBe("1.0e-05");
    expect(encodeIterationState({ executions: 2, cursor: 9007199254740993n, runtime: 0 }, true).c).toBe(
      "9007199254740993",
    );
  });

  it("reads what Ruby wrote, leniently as String#to_i/to_f; no hash is no state", () => {
    expect(decodeIterationState({})).toBeUndefined();
    expect(decodeIterationState({ ex: "3", c: '{"id":12}', rt: "4.25" })).toEqual({
      executions: 3,
      cursor: { id: 12 },
      runtime: 4.25,
    });
    expect(decodeIterationState({ ex: "2x", c: "null", rt: "junk" })).toEqual({
      executions: 2,
      cursor: null,
      runtime: 0,
    });
  });

  it("throws Ruby's errors for a cursor that is not JSON, and for a hash with no cursor (cancel! before the first run)", () => {
    expect(() => decodeIterationState({ ex: "1", c: "not json{" })).toThrow(
      expect.objectContaining({ name: "JSON::ParserError" }),
    );
    expect(() => decodeIterationState({ cancelled: "1795000000" })).toThrow(
      expect.objectContaining({ name: "TypeError", message: "no implicit conversion of nil into String" }),
    );
  });

  it("arrayEnumerator pairs each item with its index, from the cursor", () => {
    expect([...arrayEnumerator(["a", "b", "c"], null)]).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 2],
    ]);
    expect([...arrayEnumerator(["a", "b", "c"], 2)]).toEqual([["c", 2]]);
  });
});

describe("the iterable runner in a worker (real Redis)", () => {
  let server: RedisServer;
  let redis: Redis;
  let db = 0;
  const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(`${server.url}/0`);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  /** A worker on a fresh database, with `job` as IterJob. */
  async function run(version: string, job: IterableJob<[number], number>, maxIterationRuntime?: number) {
    db++;
    const url = `${server.url}/${db}`;
    const r = new Redis(url);
    const w = new Worker({
      redis: url,
      dialect: version,
      queues: ["it"],
      concurrency: 1,
      scheduler: false,
      logger: quiet,
    });
    w.registerIterable("IterJob", job, maxIterationRuntime !== undefined ? { maxIterationRuntime } : {});
    await w.start();
    const jid = "0123456789abcdef01234567";
    await r.lpush("queue:it", JSON.stringify({ class: "IterJob", queue: "it", args: [10], jid, retry: true }));
    return { w, r, jid };
  }
  const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);
  const until = async (f: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 200 && !(await f()); i++) await new Promise((r) => setTimeout(r, 25));
  };

  it("Sidekiq 8: an item that raises saves its own cursor, so the retry resumes at it", async () => {
    const { w, r, jid } = await run("8.1.7", {
      buildEnumerator: ([n], cursor) => arrayEnumerator(upTo(n), cursor),
      eachIteration: (item) => {
        if (item === 4) throw new RangeError("item 4");
      },
    });
    await until(async () => (await r.zcard("retry")) === 1);
    await w.stop();
    expect(await r.hgetall(`it-${jid}`)).toEqual({ ex: "1", c: "4", rt: "0" });
    expect(await r.ttl(`it-${jid}`)).toBeGreaterThan(30 * 86400 - 60);
    r.disconnect();
  });

  it("Sidekiq 7.3: an item that raises saves nothing (only the 5-second flush and interruptions do)", async () => {
    const { w, r, jid } = await run("7.3.2", {
      buildEnumerator: ([n], cursor) => arrayEnumerator(upTo(n), cursor),
      eachIteration: (item) => {
        if (item === 4) throw new RangeError("item 4");
      },
    });
    await until(async () => (await r.zcard("retry")) === 1);
    await w.stop();
    expect(await r.exists(`it-${jid}`)).toBe(0);
    r.disconnect();
  });

  it("quiet interrupts before the next item: the cursor is saved and the job pushed back with its jid", async () => {
    const seen: number[] = [];
    // Assigned once run() returns; the handler reads it later, when item 2 runs.
    // eslint-disable-next-line prefer-const
    let w!: Worker;
    const {
      w: worker,
      r,
      jid,
    } = await run("8.1.7", {
      buildEnumerator: ([n], cursor) => arrayEnumerator(upTo(n), cursor),
      eachIteration: async (item) => {
        seen.push(item);
        if (item === 2) void w.quietDown();
        await new Promise((res) => setTimeout(res, 10));
      },
    });
    w = worker;
    await until(() => seen.length === 3);
    await until(async () => (await r.llen("queue:it")) === 1);
    await w.stop();
    expect(seen).toEqual([0, 1, 2]);
    const state = await r.hgetall(`it-${jid}`);
    expect(state).toMatchObject({ ex: "1", c: "3" });
    expect(Number(state.rt)).toBeGreaterThan(0);
    const back = JobRecord.parse((await r.lrange("queue:it", 0, -1))[0]!);
    expect(back.getString("jid")).toBe(jid);
    expect(typeof back.get("enqueued_at")).toBe("number");
    expect(await r.zcard("retry")).toBe(0);
    // Sidekiq::JobRetry::Skip: processed and failed in the process stats, no `|f` in metrics.
    expect([await r.get("stat:processed"), await r.get("stat:failed")]).toEqual(["1", "1"]);
    r.disconnect();
  });

  it("Sidekiq 8's max_iteration_runtime interrupts long executions; each resumes where the last stopped", async () => {
    const seen: number[] = [];
    const resumed: number[] = [];
    const { w, r, jid } = await run(
      "8.1.7",
      {
        buildEnumerator: ([n], cursor) => arrayEnumerator(upTo(n), cursor),
        eachIteration: async (item) => {
          seen.push(item);
          await new Promise((res) => setTimeout(res, 40));
        },
        onResume: (ctx) => {
          resumed.push(ctx.executions);
        },
      },
      0.1,
    );
    await until(() => seen.length === 10);
    await until(async () => (await r.exists(`it-${jid}`)) === 0);
    await w.stop();
    expect(seen).toEqual(upTo(10));
    expect(resumed.length).toBeGreaterThan(1);
    expect(resumed).toEqual(resumed.map((_, i) => i + 2));
    r.disconnect();
  });

  it("a nil enumerator skips the job; a finished one deletes its state", async () => {
    const { w, r, jid } = await run("8.1.7", {
      buildEnumerator: () => null,
      eachIteration: () => {},
    });
    await until(async () => (await r.llen("queue:it")) === 0);
    await r.hset(`it-${jid}`, { ex: "1", c: "8", rt: "0.5" });
    const hooks: string[] = [];
    w.registerIterable<[number], number>("IterJob", {
      buildEnumerator: ([n], cursor) => arrayEnumerator(upTo(n), cursor),
      eachIteration: (item) => {
        hooks.push(`item:${item}`);
      },
      onResume: (ctx) => {
        hooks.push(`resume:${ctx.executions}:${String(ctx.cursor)}`);
      },
      onComplete: () => {
        hooks.push("complete");
      },
      aroundIteration: async (ctx, next) => {
        hooks.push(`around:${String(ctx.cursor)}`);
        await next();
      },
    });
    await r.lpush("queue:it", JSON.stringify({ class: "IterJob", queue: "it", args: [10], jid, retry: true }));
    await until(() => hooks.includes("complete"));
    await until(async () => (await r.exists(`it-${jid}`)) === 0);
    await w.stop();
    expect(hooks).toEqual(["resume:2:8", "around:8", "item:8", "around:9", "item:9", "complete"]);
    expect(await r.exists(`it-${jid}`)).toBe(0);
    r.disconnect();
  });
});
