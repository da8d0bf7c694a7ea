// The ctx a handler gets: its fields, and its getters (logger, signal,
// stopping) read through an object derived from it with Object.create, as an
// iterable job's ctx is.
import { inspect } from "node:util";
import { expect, it } from "vitest";
import { offlineProcessorDeps, offlineWork } from "../../harness/processor-deps.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { processJob } from "../../src/core/server/processor.js";
import type { JobContext } from "../../src/core/server/types.js";

const job =
  '{"retry":true,"queue":"q","class":"CtxJob","args":[1],"jid":"0123456789abcdef01234567","enqueued_at":1763880000001}';

it("the handler's ctx has the job's fields, and its getters work on the ctx and on an object derived from it", async () => {
  const lines: string[] = [];
  const logger: Logger = { debug() {}, info: (m) => lines.push(m), warn() {}, error() {} };
  let stopping = false;
  let seen: JobContext | undefined;
  const deps = offlineProcessorDeps({
    handlers: { CtxJob: (_a, ctx) => void (seen = ctx) },
    logger,
    stopping: () => stopping,
  });
  const uow = { queue: "queue:q", queueName: "q", job, raw: Buffer.from(job), field: undefined };
  const work = offlineWork(uow);
  expect(await processJob(work, deps)).toBe("ack");
  const ctx = seen!;
  expect([ctx.jid, ctx.className, ctx.queue, ctx.raw]).toEqual(["0123456789abcdef01234567", "CtxJob", "q", job]);
  expect(ctx.record.get("args")).toEqual([1]);
  const derived = Object.create(ctx, { extra: { get: () => 1 } }) as JobContext;
  for (const c of [ctx, derived]) {
    c.logger.info("hello");
    expect(c.signal.aborted).toBe(false);
    expect(c.stopping).toBe(false);
  }
  stopping = true;
  work.abort.abort(new Error("stop"));
  expect([ctx.stopping, derived.stopping, ctx.signal.aborted, derived.signal.aborted]).toEqual([
    true,
    true,
    true,
    true,
  ]);
  expect(lines).toEqual(["hello", "hello"]);
  // Serialised and printed as the job's fields, never the worker's internals.
  expect(Object.keys(JSON.parse(JSON.stringify(ctx)) as object)).toEqual([
    "jid",
    "className",
    "queue",
    "record",
    "raw",
    "logger",
    "signal",
    "stopping",
  ]);
  expect(inspect(ctx)).not.toContain("workerLogger");
});
