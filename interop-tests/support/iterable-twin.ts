// BridgeIterableJob's Node twin (the Ruby one is ruby-fixtures/lib/iterable_jobs.rb):
// the same enumerator over 0...count, each item appended to
// `bridge:iterated:<jid>` as "node:<item>" (Ruby writes "ruby:<item>"), hooks
// to `bridge:hooks:<jid>`, and the item named by `bridge:fail-once:<jid>`
// raising once.
import { arrayEnumerator, type IterableJob } from "../../src/core/iterable/iterable.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { Worker } from "../../src/assembly/worker.js";
import type { SidekiqContext } from "./harness.js";

export type IterArgs = [count: number, delayMs: number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function nodeTwin(sk: SidekiqContext): IterableJob<IterArgs, number> {
  const hook = (name: string) => async (ctx: { jid: string; executions: number }) => {
    await sk.redis.rpush(`bridge:hooks:${ctx.jid}`, `node:${name}:${ctx.executions}`);
  };
  return {
    buildEnumerator: ([count], cursor) =>
      arrayEnumerator(
        Array.from({ length: count }, (_, i) => i),
        cursor,
      ),
    eachIteration: async (item, [, delayMs], ctx) => {
      const failKey = `bridge:fail-once:${ctx.jid}`;
      if ((await sk.redis.get(failKey)) === String(item) && (await sk.redis.del(failKey)) === 1)
        throw new Error(`bridge fixture: item ${item} fails once`);
      await sk.redis.rpush(`bridge:iterated:${ctx.jid}`, `node:${item}`);
      await sleep(delayMs);
    },
    onStart: hook("start"),
    onResume: hook("resume"),
    onStop: hook("stop"),
    onCancel: hook("cancel"),
    onComplete: hook("complete"),
  };
}

/** A Node worker on `queue` running the twin. */
export function nodeWorker(sk: SidekiqContext, queue: string, logger?: Logger): Worker {
  const w = new Worker({
    redis: sk.url,
    dialect: sk.target.version,
    queues: [queue],
    concurrency: 2,
    scheduler: false,
    timeout: 5,
    ...(logger ? { logger } : {}),
  });
  w.registerIterable("BridgeIterableJob", nodeTwin(sk));
  return w;
}

/** A real `sidekiq` on `queue` running the Ruby class. */
export const startRuby = (sk: SidekiqContext, queue: string) =>
  sk.startSidekiq({ queues: [queue], require: "lib/iterable_jobs.rb", concurrency: 2, timeout: 10 });

export const iterated = (sk: SidekiqContext, jid: string) => sk.redis.lrange(`bridge:iterated:${jid}`, 0, -1);
export const hooks = (sk: SidekiqContext, jid: string) => sk.redis.lrange(`bridge:hooks:${jid}`, 0, -1);
