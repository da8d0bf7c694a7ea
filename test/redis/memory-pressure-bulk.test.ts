// Bulk actions on retries, scheduled and dead jobs while Redis is at
// maxmemory (noeviction), through the API, the dashboard and the CLI. The
// moves go through: Redis refuses a script's write only while it has written
// nothing, and each move starts with a ZREM. A write Redis does refuse (a
// client middleware's lock) stops the action with a BulkActionError and exact
// counts, the rest untouched; run again once memory is freed, it finishes:
// every job moved once. On the run's server kind (Redis or Valkey).
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { typescriptArgv } from "../../harness/child-processes.js";
import { REPO_ROOT } from "../../harness/local-backend.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { BulkActionError, type BulkActionOptions } from "../../src/core/api/bulk-action.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import type { EntryAction, JobSetName } from "../../src/core/api/sorted-entry.js";
import { Client } from "../../src/core/client/client.js";
import type { ClientMiddleware } from "../../src/core/client/middleware.js";
import { RedisOutOfMemoryError } from "../../src/core/redis/availability.js";
import { createWebHandler } from "../../src/assembly/web.js";
import { memoryLimit, type MemoryLimit } from "./memory-limit.js";

const N = 1000;
const BATCH = 100;

describe("bulk actions when Redis is out of memory (maxmemory, noeviction)", () => {
  let server: RedisServer;
  let redis: Redis;
  let mem: MemoryLimit;
  const opened: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    server = await startServer({ config: ["maxmemory-policy noeviction"] });
    redis = new Redis(server.url);
    mem = memoryLimit(redis);
  });
  afterAll(async () => {
    for (const o of opened) await o.close();
    redis.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.config("SET", "maxmemory", "0");
    await redis.flushdb();
  });

  const job = (i: number) =>
    JSON.stringify({
      class: i % 2 ? "OddJob" : "EvenJob",
      args: [i, "p".repeat(300)],
      jid: `j${String(i).padStart(4, "0")}`,
      queue: "q",
      retry: true,
      created_at: 1_700_000_000_000,
      enqueued_at: 1_700_000_000_000,
      retry_count: 1,
    });
  const allJids = (n: number) => Array.from({ length: n }, (_, i) => `j${String(i).padStart(4, "0")}`);
  /** `n` entries from job `from` on, scored in the past (Kill on the dead set walks up to now). */
  const seed = async (set: string, n: number, from = 0) => {
    const args: string[] = [];
    for (let i = from; i < from + n; i++) args.push(String(1_700_000_000 + i), job(i));
    await redis.zadd(set, ...args);
  };
  const jidsOf = (raws: string[]) => raws.map((r) => (JSON.parse(r) as { jid: string }).jid).sort();
  const inSet = async (set: string) => jidsOf(await redis.zrange(set, 0, -1));
  const inQueue = async () => jidsOf(await redis.lrange("queue:q", 0, -1));

  function api(middleware: ClientMiddleware[] = []): SidekiqApi {
    const client = new Client({ redis: server.url, dialect: 8, validate: false, middleware });
    const a = new SidekiqApi({ redis: server.url, client });
    opened.push(a, client);
    return a;
  }

  /**
   * A client middleware that writes, as a unique-jobs lock does: the push
   * after `after` jobs puts Redis at maxmemory first, so its own write is
   * refused (`after` 0: refused from the first job).
   */
  function lockingMiddleware(after: number): ClientMiddleware {
    let seen = 0;
    return async (ctx, next) => {
      if (seen++ === after) await mem.exhaust();
      await ctx.redis.set(`lock:${String(ctx.job.jid)}`, "1");
      await next();
    };
  }

  describe("with no write of their own to refuse, every action's moves go through", () => {
    const cases: Array<{
      set: JobSetName;
      action: EntryAction;
      opts: BulkActionOptions;
      moved: number;
      to: "queue" | "dead" | "nowhere";
    }> = [
      { set: "retry", action: "retry", opts: {}, moved: N, to: "queue" },
      { set: "retry", action: "retry", opts: { filter: { className: "OddJob" } }, moved: N / 2, to: "queue" },
      { set: "schedule", action: "add-to-queue", opts: { substr: "OddJob" }, moved: N / 2, to: "queue" },
      { set: "dead", action: "retry", opts: {}, moved: N, to: "queue" },
      { set: "retry", action: "kill", opts: {}, moved: N, to: "dead" },
      { set: "schedule", action: "kill", opts: { filter: { className: "EvenJob" } }, moved: N / 2, to: "dead" },
      { set: "retry", action: "delete", opts: { filter: { className: "OddJob" } }, moved: N / 2, to: "nowhere" },
      // Ruby's clear (UNLINK), in a script: Redis refuses a MULTI's queued commands at maxmemory.
      { set: "dead", action: "delete", opts: {}, moved: N, to: "nowhere" },
    ];
    for (const c of cases)
      it(`${c.action} on ${c.set}, ${JSON.stringify(c.opts)}: ${c.moved} moved, each once`, async () => {
        await seed(c.set, N);
        await mem.exhaust();
        expect(await mem.refusesWrites()).toBe(true);
        const s = await api()
          .set(c.set)
          .bulk(c.action, { ...c.opts, batchSize: BATCH });
        expect(s).toMatchObject({ moved: c.moved, gone: 0, failed: 0, refused: 0, interrupted: false });
        const stayed = await inSet(c.set);
        expect(stayed).toHaveLength(N - c.moved);
        const arrived = c.to === "queue" ? await inQueue() : c.to === "dead" ? await inSet("dead") : [];
        if (c.to !== "nowhere") expect(arrived).toHaveLength(c.moved);
        // Nothing lost, nothing twice.
        if (c.to !== "nowhere") expect([...stayed, ...arrived].sort()).toEqual(allJids(N));
        await mem.free();
      });
  });

  for (const scope of ["all", "text filter", "selected"] as const) {
    it(`a refused write stops retry (${scope}) with exact counts, the rest untouched; run again, it finishes`, async () => {
      await seed("retry", N);
      const opts = async (): Promise<BulkActionOptions> =>
        scope === "all"
          ? { batchSize: BATCH }
          : scope === "text filter"
            ? { batchSize: BATCH, substr: "Job" }
            : { batchSize: BATCH, entries: (await redis.zrange("retry", 0, -1)).map((raw) => ({ raw })) };
      const a = api([lockingMiddleware(250)]);
      const err = await a.retries.bulk("retry", await opts()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BulkActionError);
      const e = err as BulkActionError;
      expect(e.cause).toBeInstanceOf(RedisOutOfMemoryError);
      expect(e.message).toMatch(
        /^retry on retry stopped after 250 of 1000 entries moved; the others are untouched in retry: run the same action again once memory is freed\. Redis at .* is out of memory \(maxmemory reached, policy noeviction\)/,
      );
      // The 250 jobs whose middleware ran went to their queue; the next one's lock was refused.
      expect(e.summary).toMatchObject({ moved: 250, gone: 0, failed: 0, refused: 0, interrupted: true });
      const stayed = await inSet("retry");
      const queued = await inQueue();
      expect([stayed.length, queued.length]).toEqual([750, 250]);
      expect([...stayed, ...queued].sort()).toEqual(allJids(N));

      await mem.free();
      const again = await a.retries.bulk("retry", await opts());
      expect(again).toMatchObject({ moved: 750, gone: 0, failed: 0, interrupted: false });
      expect(await redis.zcard("retry")).toBe(0);
      expect(await inQueue()).toEqual(allJids(N));
    });
  }

  it("refused from the first job: add to queue moves nothing and says so", async () => {
    await seed("schedule", N);
    const err = await api([lockingMiddleware(0)])
      .scheduled.bulk("add-to-queue", { batchSize: BATCH })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BulkActionError);
    expect((err as BulkActionError).summary).toMatchObject({ moved: 0, failed: 0, interrupted: true });
    expect((err as Error).message).toMatch(/stopped after 0 of 1000 entries moved/);
    expect(await inSet("schedule")).toEqual(allJids(N));
    expect(await redis.llen("queue:q")).toBe(0);
  });

  it("clearing a queue frees its memory at maxmemory (Ruby's MULTI form is refused there)", async () => {
    await redis.lpush("queue:q", ...Array.from({ length: N }, (_, i) => job(i)));
    await redis.sadd("queues", "q");
    await mem.exhaust();
    expect(await mem.refusesWrites()).toBe(true);
    await api().queue("q").clear();
    expect(await redis.llen("queue:q")).toBe(0);
    expect(await redis.sismember("queues", "q")).toBe(0);
  });

  it("the dashboard's Retry All shows where it stopped and why; pressed again, it finishes", async () => {
    await seed("retry", N);
    const client = new Client({ redis: server.url, dialect: 8, validate: false, middleware: [lockingMiddleware(250)] });
    opened.push(client);
    const web = createWebHandler({ redis: server.url, apiOptions: { client } });
    const http: Server = createServer((req, res) => void web(req, res, () => res.end()));
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    opened.push({
      close: async () => {
        http.closeAllConnections();
        await new Promise((r) => http.close(r));
        await web.close();
      },
    });
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const page = await fetch(`${base}/retries`);
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0]!;
    const token = /name="authenticity_token" value="([^"]+)"/.exec(await page.text())![1]!;
    const retryAll = async () => {
      const res = await fetch(`${base}/retries/all`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: base },
        body: new URLSearchParams({ authenticity_token: token, action: "retry" }).toString(),
      });
      expect(res.status).toBe(303);
      return (await fetch(`${base}${res.headers.get("location")!}`)).text();
    };

    const stopped = await retryAll();
    expect(stopped).toMatch(/id="bulk-moved">250</);
    expect(stopped).toMatch(/id="bulk-stopped">Stopped: retry on retry stopped after 250 of 1000 entries moved/);
    expect(stopped).toContain("is out of memory");
    expect([await redis.zcard("retry"), await redis.llen("queue:q")]).toEqual([750, 250]);

    await mem.free();
    const done = await retryAll();
    expect(done).toMatch(/id="bulk-moved">750</);
    expect(done).not.toContain("bulk-stopped");
    expect(await inQueue()).toEqual(allJids(N));
  });

  /** The CLI (src/assembly/main.ts from the sources): its exit code and its --json summary. */
  async function cli(args: string[]): Promise<{ code: number | null; json: Record<string, unknown>; err: string }> {
    const child = spawn(process.execPath, [...typescriptArgv(), "src/assembly/main.ts", ...args, "--json"], {
      cwd: REPO_ROOT,
      env: { ...process.env, REDIS_URL: server.url },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const code = await new Promise<number | null>((r) => child.on("close", (c) => r(c)));
    return { code, json: out ? (JSON.parse(out) as Record<string, unknown>) : {}, err };
  }

  it("the CLI's --all actions finish at maxmemory (exit 0), each job moved once", async () => {
    await seed("retry", N);
    await seed("schedule", N / 2, N);
    // Each command starts at maxmemory (a move can free some: a sorted set's entry costs more than a list's).
    const atLimit = async (args: string[]) => {
      await mem.exhaust();
      expect(await mem.refusesWrites()).toBe(true);
      return cli(args);
    };
    const retried = await atLimit(["retries", "retry", "--all", "--class", "OddJob", "--batch-size", String(BATCH)]);
    // stderr holds at most progress lines (one a second).
    expect(retried.err).not.toMatch(/OOM|out of memory|stopped|failed:/i);
    expect([retried.code, retried.json.done, retried.json.interrupted]).toEqual([0, N / 2, false]);
    const killed = await atLimit(["scheduled", "kill", "--all"]);
    expect([killed.code, killed.json.done]).toEqual([0, N / 2]);
    const deleted = await atLimit(["retries", "delete", "--all", "--yes"]);
    expect([deleted.code, deleted.json.done]).toEqual([0, N / 2]);
    expect(await redis.zcard("retry")).toBe(0);
    expect(await redis.zcard("schedule")).toBe(0);
    expect((await inQueue()).length + (await redis.zcard("dead"))).toBe(N);
    expect(new Set([...(await inQueue()), ...(await inSet("dead"))]).size).toBe(N);
  }, 30_000);
});
