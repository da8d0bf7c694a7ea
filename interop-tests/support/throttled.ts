// Shared by the throttled interop tests: the gem for each Sidekiq release,
// Ruby with the gem and ruby-fixtures/lib/throttled_jobs.rb loaded, Node
// handlers recording exactly what the Ruby jobs record, and a Node worker
// given the throttles the Ruby classes declare.
import type { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import type { SidekiqTarget } from "../../harness/versions.js";
import type { ThrottledOptions, ThrottleOptions } from "../../src/addons/sidekiq-throttled/options.js";
import { Worker } from "../../src/assembly/worker.js";
import type { Logger } from "../../src/core/logging/logger.js";
import type { SidekiqContext } from "./harness.js";
import { captureLogger } from "./unique-jobs.js";

/** sidekiq-throttled has no release for Sidekiq 6.4; 1.5.2 runs on 7.x, 2.1.0 needs 8. */
export const THROTTLED_RELEASES = (t: SidekiqTarget) => t.version === "7.3.2" || t.version === "8.1.7";

export function gemFolders(sk: SidekiqContext): string[] {
  const gem = sk.target.version === "8.1.7" ? "sidekiq-throttled-2.1.0" : "sidekiq-throttled-1.5.2";
  return [gem, "redis-prescription-standin"];
}

/** The RUBYLIB (and lost-job threshold) for Ruby with the gem. */
export function throttledEnv(sk: SidekiqContext, ttl = 900): Record<string, string> {
  return { ...sk.peers(...gemFolders(sk)), BRIDGE_THROTTLE_TTL: String(ttl) };
}

/** Ruby with the gem and the throttled job classes loaded. */
export function throttledRuby(sk: SidekiqContext, ttl = 900) {
  return <T>(code: string) =>
    sk.ruby<T>(
      `require File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "throttled_jobs")\n${code}`,
      throttledEnv(sk, ttl),
    );
}

/** What ruby-fixtures/lib/throttled_jobs.rb's `sidekiq_throttle` calls declare. */
export function rubyThrottles(ttl = 900, observer?: ThrottleOptions["observer"]): ThrottledOptions {
  return {
    classes: {
      ConcurrencyJob: { concurrency: { limit: 2, ttl }, ...(observer ? { observer } : {}) },
      ThresholdJob: { threshold: { limit: 3, period: 3 }, ...(observer ? { observer } : {}) },
    },
  };
}

/** A handler recording what ThrottledRecording records in Ruby: args[0] is the seconds to sleep. */
export function recordingHandler(rec: Redis, className: string) {
  return async (args: unknown[], ctx: { jid: string }) => {
    const n = await rec.incr("throttled:test:running");
    await rec.rpush("throttled:test:seen", String(n));
    await rec.rpush(
      "throttled:test:starts",
      JSON.stringify({ at: Date.now() / 1000, by: "node", jid: ctx.jid, class: className }),
    );
    try {
      await new Promise((r) => setTimeout(r, Number(args[0] ?? 0) * 1000));
    } finally {
      await rec.decr("throttled:test:running");
      await rec.rpush("throttled:test:done", ctx.jid);
    }
  };
}

/** A Node worker on `queues` running both classes with the Ruby classes' throttles (or none). */
export function nodeThrottledWorker(
  sk: SidekiqContext,
  opts: { queues?: string[]; throttled?: ThrottledOptions | boolean; logger?: Logger; concurrency?: number },
): Worker {
  const w = new Worker({
    redis: sk.url,
    dialect: sk.target.version,
    queues: opts.queues ?? ["thr"],
    concurrency: opts.concurrency ?? 5,
    pollIntervalAverage: 1,
    timeout: 5,
    throttled: opts.throttled ?? rubyThrottles(),
    // Its lines stay out of the test output.
    logger: opts.logger ?? captureLogger(),
  });
  const rec = sk.newRedis();
  for (const cls of ["ConcurrencyJob", "ThresholdJob"]) w.register(cls, recordingHandler(rec, cls));
  return w;
}

export interface Start {
  at: number;
  by: "ruby" | "node";
  jid: string;
  class: string;
}

/** The most jobs that ran at once (as each start saw it), and every start. */
export async function observed(redis: Redis): Promise<{ maxAtOnce: number; starts: Start[]; done: number }> {
  const seen = (await redis.lrange("throttled:test:seen", 0, -1)).map(Number);
  const starts = (await redis.lrange("throttled:test:starts", 0, -1)).map((s) => JSON.parse(s) as Start);
  starts.sort((a, b) => a.at - b.at);
  return { maxAtOnce: Math.max(0, ...seen), starts, done: await redis.llen("throttled:test:done") };
}

/** The most starts within any `period` seconds (a start at the window's end counts), less `slack` for the time each start took to record. */
export function mostStartsWithin(starts: readonly Start[], period: number, slack: number): number {
  let most = 0;
  for (let i = 0; i < starts.length; i++) {
    let n = 0;
    for (let j = i; j < starts.length && starts[j]!.at - starts[i]!.at < period - slack; j++) n++;
    most = Math.max(most, n);
  }
  return most;
}

/** For a describe: a real Ruby Sidekiq with the gem serving queue "thr", stopped after its tests. */
export function useRubyThrottledServer(sk: SidekiqContext, ttl = 900): void {
  let server: { stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    server = await sk.startSidekiq({
      queues: ["thr"],
      concurrency: 5,
      require: "lib/throttled_jobs.rb",
      env: throttledEnv(sk, ttl),
    });
  });
  afterAll(async () => {
    await server?.stop();
  });
}
