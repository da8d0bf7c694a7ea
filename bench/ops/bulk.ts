// Retry all, at operator scale, three ways on the same seeded retry set:
//   1. `sidekiq-bridge retries retry --all` as a whole process (no client
//      middleware: the CLI loads no application code), wall time and max RSS;
//   2. the API in-process with a Client whose middleware chain is on (one
//      pass-through link, so every job goes through the chain as Ruby's
//      Client#push runs it): `retries.bulk("retry")` when the bulk API is in
//      this tree, else `retryAll()` (said in the report);
//   3. Ruby's `RetrySet#retry_all` (Sidekiq 8.1.7, in-process).
// Each starts from the same freshly seeded set and is checked: the retry set
// ends empty and the queues gained exactly as many jobs as it held.
import { spawn } from "node:child_process";
import type { Redis } from "ioredis";
import { Client } from "../../src/core/client/client.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import type { FleetSize } from "./seed.js";
import { cliArgv, type RubySide } from "./sides.js";

export interface BulkFigures {
  ours: { ms: number; rssKb: number };
  api: { ms: number; how: string };
  ruby?: { ms: number };
  markdown: string;
}

async function queuedTotal(redis: Redis): Promise<number> {
  const queues = await redis.smembers("queues");
  const pipe = redis.pipeline();
  for (const q of queues) pipe.llen(`queue:${q}`);
  return ((await pipe.exec()) ?? []).reduce((a, [, n]) => a + Number(n), 0);
}

/** Runs `move`, then checks every retry landed in a queue exactly once (by count). */
async function checked(redis: Redis, what: string, move: () => Promise<void>): Promise<number> {
  const [before, queued] = [await redis.zcard("retry"), await queuedTotal(redis)];
  const t = performance.now();
  await move();
  const ms = performance.now() - t;
  const [left, after] = [await redis.zcard("retry"), await queuedTotal(redis)];
  const ok = left === 0 && after - queued === before;
  console.log(
    `  ${what}: ${before.toLocaleString("en-US")} retries in ${(ms / 1000).toFixed(1)} s; left ${left}, queues +${(after - queued).toLocaleString("en-US")}${ok ? "" : "  MISMATCH"}`,
  );
  if (!ok) throw new Error(`${what}: ${before} retries, ${left} left, queues +${after - queued}`);
  return ms;
}

function cliRetryAll(url: string): Promise<number> {
  return new Promise((res, rej) => {
    const child = spawn(
      "/usr/bin/time",
      ["-f", "__RSS__ %M", ...cliArgv("retries", "retry", "--all", "--redis", url)],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      const m = /__RSS__ (\d+)/.exec(err);
      if (code !== 0 || !m) rej(new Error(`retries retry --all failed (${code}): ${err.slice(-800)}`));
      else res(Number(m[1]));
    });
  });
}

export async function bulkRetryAll(
  redis: Redis,
  url: string,
  size: FleetSize,
  ruby: RubySide,
  reseed: (redis: Redis, count: number, queues: number) => Promise<void>,
): Promise<BulkFigures> {
  let rssKb = 0;
  const cliMs = await checked(redis, "ours, CLI retries retry --all", async () => {
    rssKb = await cliRetryAll(url);
  });

  await reseed(redis, size.retries, size.queues);
  let chained = 0;
  const client = new Client({
    redis: url,
    dialect: "8.1.7",
    middleware: [
      async (_ctx, next) => {
        chained++;
        await next();
      },
    ],
  });
  const api = new SidekiqApi({ redis: url, client, apiVersion: "8.1.7" });
  const retries = api.retries as unknown as { bulk?: (a: "retry") => Promise<unknown>; retryAll(): Promise<unknown> };
  const how =
    typeof retries.bulk === "function"
      ? 'API `retries.bulk("retry")`, middleware chain on'
      : "API `retryAll()` (no bulk API in this tree), middleware chain on";
  let apiMs: number;
  try {
    apiMs = await checked(redis, `ours, ${how}`, async () => {
      await (retries.bulk ? retries.bulk("retry") : retries.retryAll());
    });
  } finally {
    await api.close();
    await client.close();
  }
  if (chained !== size.retries) console.log(`  the middleware ran ${chained} times for ${size.retries} retries`);

  await reseed(redis, size.retries, size.queues);
  let rubyMs: number | undefined;
  await checked(redis, "Ruby RetrySet#retry_all", async () => {
    const r = await ruby.run(url, { OPS_MODE: "retry_all" }, 4 * 3_600_000);
    rubyMs = r.retry_all!.ms;
  });

  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const ratio = (ms: number) => (rubyMs ? `${(rubyMs / ms).toFixed(1)}×` : "–");
  const markdown = `### Retry all of ${size.retries.toLocaleString("en-US")} (target ≥ 10× Ruby's retry_all, with the middleware chain on)

| who | time | vs Ruby | peak RSS |
|---|---:|---:|---:|
| ours, \`sidekiq-bridge retries retry --all\` (whole process, no middleware) | ${s(cliMs)} | ${ratio(cliMs)} | ${Math.round(rssKb / 1024)} MB${rssKb / 1024 <= 150 ? " ok" : " MISSED"} |
| ours, ${how} (the middleware ran ${chained.toLocaleString("en-US")} times) | ${s(apiMs)} | ${ratio(apiMs)}${rubyMs && rubyMs / apiMs >= 10 ? " ok" : " MISSED"} | (in the bench process) |
| Ruby 8.1.7 \`RetrySet.new.retry_all\` | ${rubyMs ? s(rubyMs) : "–"} | 1× | |

Each run started from the same freshly seeded set, ended with the retry set empty and the queues longer by exactly its size.
`;
  return { ours: { ms: cliMs, rssKb }, api: { ms: apiMs, how }, ruby: rubyMs ? { ms: rubyMs } : undefined, markdown };
}
