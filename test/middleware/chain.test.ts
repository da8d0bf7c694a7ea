// The one middleware chain of the client and the server answers as
// Sidekiq::Middleware::Chain does: add (moving one of the same name to the
// end), prepend, insertBefore and insertAfter (first or last when the other is
// missing), remove, exists, clear, empty; it runs its entries in order, each
// around the rest, and refuses a second next() from one entry, naming it.
import { describe, expect, it } from "vitest";
import { MiddlewareChain, middlewareName, named } from "../../src/core/middleware/chain.js";
import { uniqueJobs } from "../../src/addons/sidekiq-unique-jobs/server.js";
import { Client } from "../../src/core/client/client.js";
import type { ClientMiddleware } from "../../src/core/client/middleware.js";
import { processJob, type ServerMiddleware } from "../../src/core/server/processor.js";
import { unitOfWork } from "../../src/core/server/fetch/fetch.js";
import { Worker } from "../../src/assembly/worker.js";
import { offlineProcessorDeps, offlineWork } from "../../harness/processor-deps.js";
import { quietLogger as logger } from "../support/use-redis.js";

type Mw = (x: string[], next: () => void) => void;
const mw = (name: string): Mw => named(name, (x, next) => (x.push(name), next()));
const names = (c: MiddlewareChain<Mw>) => c.entries.map((e) => middlewareName(e));

describe("MiddlewareChain", () => {
  it("adds, prepends and inserts by name, moving an entry of the same name rather than adding it twice", () => {
    const c = new MiddlewareChain<Mw>();
    c.add(mw("A")).add(mw("B")).add(mw("C"));
    c.add(mw("A"));
    expect(names(c)).toEqual(["B", "C", "A"]);
    c.prepend(mw("Z")).insertBefore("C", mw("X")).insertAfter("B", mw("Y"));
    expect(names(c)).toEqual(["Z", "B", "Y", "X", "C", "A"]);
    c.insertBefore("missing", mw("F")).insertAfter("missing", mw("L"));
    expect(names(c)).toEqual(["F", "Z", "B", "Y", "X", "C", "A", "L"]);
  });

  it("answers exists and removes, by name or by the function itself; unnamed functions are never taken for each other", () => {
    const c = new MiddlewareChain<Mw>();
    const a: Mw = (x, next) => next();
    const b: Mw = (x, next) => next();
    c.add(a).add(b).add(mw("Named"));
    expect([c.exists(a), c.exists(b), c.exists("Named"), c.exists("a")]).toEqual([true, true, true, false]);
    c.remove(a).remove("Named");
    expect(c.entries).toEqual([b]);
    c.add(b);
    expect(c.entries).toEqual([b]);
  });

  it("a worker finds sidekiq-unique-jobs' middleware added by hand by its gem's class name", async () => {
    const w = new Worker({ redis: "redis://127.0.0.1:1", dialect: 8, logger, queues: ["chain"], uniqueJobs: false });
    expect(w.serverMiddleware.exists("SidekiqUniqueJobs::Middleware::Server")).toBe(false);
    w.use(uniqueJobs({ logger }).middleware);
    expect(w.serverMiddleware.exists("SidekiqUniqueJobs::Middleware::Server")).toBe(true);
    await w.stop().catch(() => undefined);
  });

  it("clears, and says when it is empty", () => {
    const c = new MiddlewareChain<Mw>();
    expect(c.empty).toBe(true);
    c.add(mw("A")).add(mw("B"));
    expect(c.empty).toBe(false);
    expect(c.clear().entries).toEqual([]);
    expect(c.empty).toBe(true);
  });

  it("runs its entries in order, each around the rest, and the end last; true when the end was reached", async () => {
    const c = new MiddlewareChain<Around>();
    const seen: string[] = [];
    const around =
      (name: string): Around =>
      async (x, next) => {
        x.push(`${name} in`);
        await next();
        x.push(`${name} out`);
      };
    c.add(around("B")).prepend(around("A")).insertAfter(around("B"), around("C"));
    expect(await c.invoke(seen, () => void seen.push("job"))).toBe(true);
    expect(seen).toEqual(["A in", "B in", "C in", "job", "C out", "B out", "A out"]);
  });

  it("reaches nothing past an entry that does not call next(): false, and the end never runs", async () => {
    const c = new MiddlewareChain<Around>();
    const seen: string[] = [];
    c.add(named("Stop", async (x) => void x.push("stop"))).add(named("After", async (x, n) => (x.push("after"), n())));
    expect(await c.invoke(seen, () => void seen.push("job"))).toBe(false);
    expect(seen).toEqual(["stop"]);
  });

  it("an empty chain runs the end alone", async () => {
    const seen: string[] = [];
    expect(await new MiddlewareChain<Around>().invoke(seen, () => void seen.push("job"))).toBe(true);
    expect(seen).toEqual(["job"]);
  });

  it("refuses a second next() from one entry, naming it (its chain name, else its function name)", async () => {
    const twice = async (_x: string[], next: () => Promise<void>) => {
      await next();
      await next();
    };
    const seen: string[] = [];
    const c = new MiddlewareChain<Around>("server").add(named("First", async (_x, n) => n())).add(twice);
    await expect(c.invoke(seen, () => void seen.push("job"))).rejects.toThrow(
      "server middleware twice (#2 in the chain) called next() a second time",
    );
    expect(seen).toEqual(["job"]);
    const d = new MiddlewareChain<Around>("client").add(named("Acme::Twice", twice));
    await expect(d.invoke([])).rejects.toThrow(
      "client middleware Acme::Twice (#1 in the chain) called next() a second time",
    );
  });

  it("is the client's chain: options, use and the chain's own operations, run around each push", async () => {
    const order: string[] = [];
    const link =
      (name: string): ClientMiddleware =>
      async (_ctx, next) => {
        order.push(name);
        await next();
      };
    const [a, b, c] = [named("A", link("A")), named("B", link("B")), named("C", link("C"))];
    const client = new Client({ redis: "redis://127.0.0.1:1", dialect: 8, middleware: [a], warn: () => {} });
    try {
      client.use(c).middleware.insertBefore("C", b);
      expect([client.middleware.exists("B"), client.middleware.exists(b)]).toEqual([true, true]);
      expect(client.middleware.entries).toEqual([a, b, c]);
      expect(await client.middleware.invoke({ className: "X", job: {}, queue: "q", redis: undefined as never })).toBe(
        true,
      );
      expect(order).toEqual(["A", "B", "C"]);
      client.middleware.remove("A").insertAfter("C", a);
      expect(client.middleware.entries).toEqual([b, c, a]);
    } finally {
      await client.close();
    }
  });

  it("is the server's chain: a middleware's second next() fails the job, which ran once", async () => {
    const warned: Array<Record<string, unknown> | undefined> = [];
    let ran = 0;
    const deps = offlineProcessorDeps({
      handlers: { A: () => void ran++ },
      logger: { ...logger, warn: (_m, c) => void warned.push(c) },
      middleware: [
        named("Twice", (async (_ctx, next) => {
          await next();
          await next();
        }) as ServerMiddleware),
      ],
    });
    const job = '{"class":"A","args":[],"jid":"0123456789abcdef01234567","queue":"q","retry":false}';
    // The retry path needs Redis: offline, the job goes back to its queue.
    expect(await processJob(offlineWork(unitOfWork("queue:q", Buffer.from(job))), deps)).toBe("requeue");
    expect(ran).toBe(1);
    expect(warned[0]?.error_message).toBe(
      "server middleware Twice (#1 in the chain) called next() a second time: next() runs the rest of the chain, once",
    );
  });
});

type Around = (x: string[], next: () => Promise<void>) => Promise<void>;
