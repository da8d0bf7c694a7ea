// The server middleware chain answers as Sidekiq::Middleware::Chain does:
// add (moving one of the same name to the end), prepend, insertBefore and
// insertAfter (first or last when the other is missing), remove, exists.
import { describe, expect, it } from "vitest";
import { MiddlewareChain, middlewareName, named } from "../../src/core/server/middleware-chain.js";
import { uniqueJobs } from "../../src/addons/sidekiq-unique-jobs/server.js";
import { Worker } from "../../src/assembly/worker.js";
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
});
