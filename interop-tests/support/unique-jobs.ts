// Shared by the unique-jobs interop tests: the gem under test, Ruby with the
// gem and its job classes loaded, and a Node worker mirroring those classes.
import { afterAll, afterEach, beforeAll } from "vitest";
import type { SidekiqProcess } from "../../harness/backend.js";
import { Worker } from "../../src/assembly/worker.js";
import type { Logger } from "../../src/core/logging/logger.js";
import { uniqueJobs } from "../../src/addons/sidekiq-unique-jobs/index.js";
import type { SidekiqContext } from "./harness.js";

export const GEMS = [
  { gem: 8 as const, folder: "sidekiq-unique-jobs-8.1.0" },
  { gem: 9 as const, folder: "sidekiq-unique-jobs-9.0.0.alpha2" },
];

/** The gem versions tested on a Sidekiq release: 9.0.0.alpha2 only on 8.1.7. */
export function gemsFor(target: { version: string }): typeof GEMS {
  return GEMS.filter(({ gem }) => gem !== 9 || target.version === "8.1.7");
}

export const UNIQUE_CLASSES = [
  "UntilExecutedJob",
  "UntilExecutingJob",
  "WhileExecutingJob",
  "WhileExecutingRaiseJob",
  "UntilAndWhileExecutingJob",
  "UntilExpiredJob",
  "UntilExecutedRejectJob",
  "UntilExecutedLogJob",
  "UntilExecutedRaiseJob",
  "UntilExecutedTtlJob",
  "DyingUniqueJob",
  "DroppedUniqueJob",
];

export interface Snapshot {
  keys: Record<string, string>;
  changelog: Array<{ script: string; message: string }>;
}

/** Ruby with the gem and the unique job classes loaded. */
export function uniqueRuby(sk: SidekiqContext, folder: string) {
  return <T>(code: string) =>
    sk.ruby<T>(
      `require File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "unique_jobs")\n${code}`,
      sk.peers(folder),
    );
}

export interface Captured extends Logger {
  lines: string[];
}

export function captureLogger(): Captured {
  const lines: string[] = [];
  const line = (lvl: string) => (m: string, c?: Record<string, unknown>) => {
    lines.push(`${lvl} ${m} ${c ? JSON.stringify(c) : ""}`);
  };
  return { lines, debug: line("DEBUG"), info: line("INFO"), warn: line("WARN"), error: line("ERROR") };
}

/** A Node worker whose handlers behave as the Ruby classes do (sleep:<s>, fail). */
export function nodeUniqueWorker(
  sk: SidekiqContext,
  opts: {
    gem: 8 | 9;
    queues: string[];
    /** false: no unique-jobs support; "use": its middleware added by hand; default: the uniqueJobs option. */
    unique?: boolean | "use";
    logger?: Logger;
    concurrency?: number;
    runWithout?: string[];
  },
): Worker {
  const uniqueLogger = opts.logger ? { logger: opts.logger } : {};
  const w = new Worker({
    redis: sk.url,
    dialect: sk.target.version,
    queues: opts.queues,
    concurrency: opts.concurrency ?? 5,
    pollIntervalAverage: 1,
    timeout: 5,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.runWithout ? { runWithout: opts.runWithout } : {}),
    ...(opts.unique === undefined || opts.unique === true ? { uniqueJobs: { gem: opts.gem, ...uniqueLogger } } : {}),
  });
  const rec = sk.newRedis();
  for (const cls of UNIQUE_CLASSES) {
    w.register(cls, async (args, ctx) => {
      const cmd = String(args[0] ?? "");
      if (cmd.startsWith("sleep:")) await new Promise((r) => setTimeout(r, Number(cmd.slice(6)) * 1000));
      if (cmd === "fail") throw new Error("unique fixture failure");
      await rec.lpush(
        "bridge:received",
        JSON.stringify({ class: cls, jid: ctx.jid, args_json: ctx.record.raw("args") }),
      );
    });
  }
  if (opts.unique === "use") {
    const u = uniqueJobs({ gem: opts.gem, ...uniqueLogger });
    w.use(u.middleware).onDeath(u.onDeath);
  }
  return w;
}

/** The snapshot with each queue's digest replaced, so runs on two queues compare. */
export function normalize(s: Snapshot, digests: Record<string, string>): Snapshot {
  const sub = (k: string) => {
    for (const [name, d] of Object.entries(digests)) k = k.split(d).join(`<${name}>`);
    return k;
  };
  return {
    keys: Object.fromEntries(Object.entries(s.keys).map(([k, v]) => [sub(k), v])),
    changelog: s.changelog,
  };
}

export async function received(sk: SidekiqContext): Promise<Array<{ jid: string; class: string }>> {
  return (await sk.redis.lrange("bridge:received", 0, -1)).map((x) => JSON.parse(x));
}

/**
 * For a describe: a real Ruby Sidekiq with the gem on queue "uqr" for its
 * tests (stopped after them, as the next gem's server takes the same queue),
 * and the Node workers a test pushes to `workers` stopped after each test.
 */
export function useRubyUniqueServer(sk: SidekiqContext, folder: string, workers: Worker[]): void {
  let server: SidekiqProcess | undefined;
  beforeAll(async () => {
    server = await sk.startSidekiq({
      queues: ["uqr"],
      concurrency: 3,
      require: "lib/unique_jobs.rb",
      env: sk.peers(folder),
    });
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  afterAll(async () => {
    await server?.stop();
  });
}
