// drain, performOne and drainAll run the fake's jobs through a Worker's
// handlers by the processor's own steps; inline mode runs each push at once;
// modes switch per process and per block, and a block inside a block is
// refused. The worker and client point where nothing listens: neither
// connects.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  clearAll,
  drain,
  drainAll,
  EmptyQueueError,
  jobs,
  performOne,
  serverMiddleware,
  testing,
  TestModeAlreadySetError,
} from "../../src/testing/index.js";
import { Client } from "../../src/core/client/client.js";
import { Worker } from "../../src/assembly/worker.js";
import type { JsonValue } from "../../src/core/wire/json-scan.js";

const NOWHERE = "redis://127.0.0.1:1";
const silent = { debug() {}, info() {}, warn() {}, error() {} };

let client: Client;
let worker: Worker;
let ran: Array<[string, JsonValue[]]>;

beforeEach(() => {
  clearAll();
  serverMiddleware.clear();
  testing("fake");
  ran = [];
  client = new Client({ redis: NOWHERE, dialect: 8 });
  worker = new Worker({ redis: NOWHERE, logger: silent });
  worker.register("HardJob", (args) => void ran.push(["HardJob", args]));
  worker.register("ChainJob", async (args) => {
    ran.push(["ChainJob", args]);
    const n = Number(args[0]);
    if (n > 0) await client.unchecked.job("ChainJob").performAsync(n - 1);
  });
  worker.register("BadJob", () => {
    throw new Error("boom");
  });
  worker.registerActiveJob("WelcomeJob", (args) => void ran.push(["WelcomeJob", args as JsonValue[]]));
});

afterEach(async () => {
  testing("fake");
  await client.close();
  await worker.stop();
});

describe("drain", () => {
  it("runs a class's jobs in order with the arguments read back from JSON, and leaves none", async () => {
    await client.unchecked.job("HardJob").performAsync(1, { a: [2.5] });
    await client.unchecked.job("HardJob").performIn(60, "later");
    await client.unchecked.job("OtherJob").performAsync(0);
    await drain(worker, "HardJob");
    expect(ran).toEqual([
      ["HardJob", [1, { a: [2.5] }]],
      ["HardJob", ["later"]],
    ]);
    expect(jobs("HardJob")).toEqual([]);
    expect(jobs().map((j) => j.class)).toEqual(["OtherJob"]);
  });

  it("drains the jobs its jobs push", async () => {
    await client.unchecked.job("ChainJob").performAsync(2);
    await drain(worker, "ChainJob");
    expect(ran).toEqual([
      ["ChainJob", [2]],
      ["ChainJob", [1]],
      ["ChainJob", [0]],
    ]);
  });

  it("performOne runs the oldest job, and says so when there is none", async () => {
    await client.unchecked.job("HardJob").performAsync(1);
    await client.unchecked.job("HardJob").performAsync(2);
    await performOne(worker, "HardJob");
    expect(ran).toEqual([["HardJob", [1]]]);
    expect(jobs("HardJob").map((j) => j.args)).toEqual([[2]]);
    await performOne(worker, "HardJob");
    await expect(performOne(worker, "HardJob")).rejects.toThrow(EmptyQueueError);
    await expect(performOne(worker, "HardJob")).rejects.toThrow("perform_one called with empty job queue");
  });

  it("an error reaches the test, with no retry; a class without a handler fails as NameError", async () => {
    await client.unchecked.job("BadJob").performAsync();
    await expect(drain(worker, "BadJob")).rejects.toThrow("boom");
    expect(jobs("BadJob")).toEqual([]);
    await client.unchecked.job("NoSuchJob").performAsync();
    await expect(drain(worker, "NoSuchJob")).rejects.toThrow("uninitialized constant NoSuchJob");
  });

  it("drainAll runs every class, ActiveJob by its wrapper, until nothing is left", async () => {
    await client.unchecked.job("ChainJob").performAsync(1);
    await client.unchecked.job("HardJob").performAsync("h");
    await client.unchecked.activeJob("WelcomeJob").performLater("w");
    await drainAll(worker);
    expect(ran).toEqual([
      ["ChainJob", [1]],
      ["ChainJob", [0]],
      ["HardJob", ["h"]],
      ["WelcomeJob", ["w"]],
    ]);
    expect(jobs()).toEqual([]);
  });

  it("runs the testing server middleware, not the worker's own", async () => {
    const seen: string[] = [];
    worker.use(async (_ctx, next) => (seen.push("worker"), next()));
    serverMiddleware.add(async (ctx, next) => {
      seen.push(`testing ${ctx.className} ${ctx.queue} ${ctx.jid.length}`);
      await next();
    });
    await client.unchecked.job("HardJob").performAsync(1);
    await drain(worker, "HardJob");
    expect(seen).toEqual(["testing HardJob default 24"]);
    expect(ran).toHaveLength(1);
  });
});

describe("inline mode", () => {
  it("runs each push at once, a job's own pushes inside it; an error reaches the push", async () => {
    testing("inline", worker);
    await client.unchecked.job("ChainJob").performAsync(1);
    expect(ran).toEqual([
      ["ChainJob", [1]],
      ["ChainJob", [0]],
    ]);
    await expect(client.unchecked.job("BadJob").performAsync()).rejects.toThrow("boom");
    expect(jobs()).toEqual([]);
  });

  it("per block: the block's mode, then the process's again; nesting is refused as in Ruby", async () => {
    await testing("inline", worker, async () => {
      await client.unchecked.job("HardJob").performAsync("inline");
      await expect(testing("fake", () => undefined)).rejects.toThrow(TestModeAlreadySetError);
      await expect(testing("fake", () => undefined)).rejects.toThrow("Nesting test modes is not supported");
    });
    await client.unchecked.job("HardJob").performAsync("fake");
    expect(ran).toEqual([["HardJob", ["inline"]]]);
    expect(jobs("HardJob").map((j) => j.args)).toEqual([["fake"]]);
    testing("inline", worker);
    expect(await testing("fake", async () => (await client.unchecked.job("HardJob").performAsync(3), 7))).toBe(7);
    expect(jobs("HardJob")).toHaveLength(2);
  });

  it("inline without a worker is a clear error", () => {
    expect(() => (testing as (m: string) => void)("inline")).toThrow(/needs the Worker/);
    expect(() => (testing as (m: string) => void)("lazy")).toThrow(/unknown test mode "lazy"/);
  });
});
