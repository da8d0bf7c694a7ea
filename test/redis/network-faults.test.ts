// Networks that fail without a word: a fault proxy on 127.0.0.1 between Redis
// and the worker or client blackholes the flows it carries (no FIN, no RST),
// or partitions them until healed. Every connection bounds its silence by its
// network timeout (1 s here, 3 s by default), so the worker resumes with
// nothing lost and its heartbeat back, and a push settles, never hangs.
// Jobs are pushed straight to Redis, past the proxy.
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../../harness/fault-proxy.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { freePort, startRedis } from "../../harness/redis-server.js";
import { makeTestCerts } from "../../harness/tls.js";
import { Client } from "../../src/core/client/client.js";
import { PushUncertainError } from "../../src/core/client/errors.js";
import { RedisUnavailableError } from "../../src/core/redis/availability.js";
import { Worker } from "../../src/assembly/worker.js";
import { quietLogger as logger } from "../support/use-redis.js";

const TIMEOUT_MS = 1000;
/** What a test allows past a bound: this machine may be loaded. */
const MARGIN_MS = 15_000;

describe("a network that drops flows silently", () => {
  let server: RedisServer;
  let redis: Redis;
  let proxy: FaultProxy;
  const open: Array<{ stop?: () => Promise<unknown>; close?: () => Promise<unknown> }> = [];

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.url);
  });
  afterEach(async () => {
    for (const o of open.splice(0)) await (o.stop ?? o.close)!.call(o);
    await proxy?.close();
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });

  const via = async () => {
    proxy = await startFaultProxy(server.port);
    return { url: proxy.url, networkTimeoutMs: TIMEOUT_MS };
  };
  const job = (queue: string, n: number) =>
    JSON.stringify({ class: "Net", queue, args: [n], jid: `net${queue}${n}`.padEnd(24, "0"), retry: true });
  const beatOf = async (w: Worker) => Number(await redis.hget(w.identity, "beat"));

  async function worker(queue: string, fetch: "reliable" | "basic") {
    const ran: number[] = [];
    const w = new Worker({ redis: await via(), dialect: 8, queues: [queue], concurrency: 2, logger, fetch });
    w.register("Net", async ([n]) => void ran.push(Number(n)));
    open.push(w);
    await w.start();
    return { w, ran };
  }

  for (const fetch of ["reliable", "basic"] as const) {
    it(`the worker (${fetch} fetch) resumes after a blackhole: every job runs, the heartbeat comes back`, async () => {
      const q = `bh-${fetch}`;
      const { w, ran } = await worker(q, fetch);
      await redis.lpush(`queue:${q}`, job(q, 1));
      await expect.poll(() => ran, { timeout: MARGIN_MS }).toEqual([1]);
      const flows = proxy.connections;
      const beat = await beatOf(w);
      proxy.blackhole();
      // A fetch blocked when the flows went silent is still blocked in Redis
      // for its 2 s: a job pushed then goes to it. Reliable fetch keeps that
      // job in its working list and reclaims it; Sidekiq's basic fetch loses
      // it, so for basic the jobs come once the worker has new connections.
      if (fetch === "basic") await expect.poll(() => proxy.live, { timeout: MARGIN_MS }).toBeGreaterThanOrEqual(2);
      for (let n = 2; n <= 6; n++) await redis.lpush(`queue:${q}`, job(q, n));
      await expect
        .poll(() => [...ran].sort(), { timeout: 3 * TIMEOUT_MS + 2000 + MARGIN_MS })
        .toEqual([1, 2, 3, 4, 5, 6]);
      expect(proxy.connections).toBeGreaterThan(flows);
      await expect.poll(() => beatOf(w), { timeout: 10_000 + MARGIN_MS }).toBeGreaterThan(beat);
      expect(await redis.llen(`queue:${q}`)).toBe(0);
    }, 60_000);
  }

  it("a fetch reply cut in the middle of the job: the worker connects again and reclaims it; it runs once", async () => {
    const q = "cut";
    const { ran } = await worker(q, "reliable");
    proxy.cutMidBulk(`net${q}1`);
    await redis.lpush(`queue:${q}`, job(q, 1));
    await expect.poll(() => ran, { timeout: 2000 + 3 * TIMEOUT_MS + MARGIN_MS }).toEqual([1]);
    await redis.lpush(`queue:${q}`, job(q, 2));
    await expect.poll(() => ran, { timeout: MARGIN_MS }).toEqual([1, 2]);
  }, 60_000);

  it("the worker resumes after a partition heals; jobs pushed during it all run", async () => {
    const q = "part";
    const { ran } = await worker(q, "reliable");
    proxy.partition();
    for (let n = 1; n <= 4; n++) await redis.lpush(`queue:${q}`, job(q, n));
    // Long enough for every connection to notice and fail a reconnect.
    await new Promise((r) => setTimeout(r, 3 * TIMEOUT_MS + 2000));
    const during = [...ran];
    proxy.heal();
    await expect.poll(() => [...ran].sort(), { timeout: 3 * TIMEOUT_MS + 2000 + MARGIN_MS }).toEqual([1, 2, 3, 4]);
    // What ran during the partition ran once (the proxy passed nothing, so nothing did).
    expect(during).toEqual([]);
  }, 60_000);

  it("a push through a blackhole settles: sent once more on a new connection, written once", async () => {
    const client = new Client({ redis: await via(), dialect: 8 });
    open.push(client);
    await client.push({ class: "Net", queue: "cbh", args: [0] });
    proxy.blackhole();
    const t0 = Date.now();
    const outcome = await client.push({ class: "Net", queue: "cbh", args: [1] }).then(
      (jid) => ({ jid }),
      (e: unknown) => ({ e }),
    );
    expect(Date.now() - t0).toBeLessThan(2 * TIMEOUT_MS + MARGIN_MS);
    // Resolved, or (past its bound on a loaded machine) rejected as uncertain.
    if ("e" in outcome) expect(outcome.e).toBeInstanceOf(PushUncertainError);
    const ones = async () => (await redis.lrange("queue:cbh", 0, -1)).filter((j) => JSON.parse(j).args[0] === 1).length;
    await expect.poll(ones, { timeout: MARGIN_MS }).toBe(1);
    // Later pushes go through the new connection.
    const jid = await client.push({ class: "Net", queue: "cbh", args: [2] });
    expect(JSON.parse((await redis.lindex("queue:cbh", 0))!).jid).toBe(jid);
  }, 60_000);

  it("a push whose reply is reset mid-way settles, and its job is in Redis once or twice (at-least-once)", async () => {
    const client = new Client({ redis: await via(), dialect: 8 });
    open.push(client);
    await client.push({ class: "Net", queue: "crst", args: [0] });
    proxy.resetMidReply();
    const outcome = await client.push({ class: "Net", queue: "crst", args: [1] }).catch((e: unknown) => e);
    if (outcome instanceof Error) expect(outcome).toBeInstanceOf(PushUncertainError);
    const ones = (await redis.lrange("queue:crst", 0, -1)).filter((j) => JSON.parse(j).args[0] === 1);
    expect(ones.length).toBeGreaterThanOrEqual(1);
    expect(ones.length).toBeLessThanOrEqual(2);
    expect(new Set(ones.map((j) => JSON.parse(j).jid)).size).toBe(1);
  }, 60_000);

  it("over TLS the same bounds hold: a worker and a push through a blackholed TLS flow resume", async () => {
    const certs = makeTestCerts();
    const tlsPort = await freePort();
    // Debian's redis-server serves TLS (as the TLS connection tests use it); the run's server kind need not.
    const tlsServer = await startRedis({ config: certs.redisConfig(tlsPort) });
    try {
      proxy = await startFaultProxy(tlsPort);
      const source = { url: `rediss://127.0.0.1:${proxy.port}/0`, tls: { ca: certs.ca }, networkTimeoutMs: TIMEOUT_MS };
      const plain = new Redis(tlsServer.url);
      const ran: number[] = [];
      const w = new Worker({ redis: source, dialect: 8, queues: ["tls"], concurrency: 2, logger });
      w.register("Net", async ([n]) => void ran.push(Number(n)));
      const client = new Client({ redis: source, dialect: 8, warn: () => undefined });
      open.push(w, client, { close: async () => plain.disconnect() }, { stop: () => tlsServer.stop() });
      await w.start();
      await client.push({ class: "Net", queue: "tls", args: [1] });
      await expect.poll(() => ran, { timeout: MARGIN_MS }).toEqual([1]);
      proxy.blackhole();
      const outcome = await client.push({ class: "Net", queue: "tls", args: [2] }).catch((e: unknown) => e);
      if (outcome instanceof Error) expect(outcome).toBeInstanceOf(PushUncertainError);
      await plain.lpush("queue:tls", job("tls", 3));
      await expect.poll(() => ran.includes(3), { timeout: 3 * TIMEOUT_MS + 2000 + MARGIN_MS }).toBe(true);
      await expect.poll(() => ran.filter((n) => n === 2).length, { timeout: MARGIN_MS }).toBe(1);
    } finally {
      certs.remove();
    }
  }, 90_000);

  it("pushes while partitioned reject within their bound and queue nothing; after the heal they go through", async () => {
    const client = new Client({ redis: await via(), dialect: 8, connectWaitMs: 2000 });
    open.push(client);
    await client.push({ class: "Net", queue: "cp", args: [0] });
    proxy.partition();
    const t0 = Date.now();
    const first = await client.push({ class: "Net", queue: "cp", args: [1] }).catch((e: unknown) => e);
    // Sent on a silent flow: Redis never saw it (the proxy passed nothing), but the client cannot know.
    expect(first).toBeInstanceOf(PushUncertainError);
    expect((first as Error).message).toMatch(/may or may not be written/);
    expect(Date.now() - t0).toBeLessThan(2 * TIMEOUT_MS + MARGIN_MS);
    // Later pushes wait for a connection (connectWaitMs), then reject: none is sent.
    const later = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => client.push({ class: "Net", queue: "cp", args: [100 + i] })),
    );
    for (const r of later) {
      expect(r.status).toBe("rejected");
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(RedisUnavailableError);
    }
    expect(Date.now() - t0).toBeLessThan(2 * TIMEOUT_MS + 2000 + MARGIN_MS);
    proxy.heal();
    await expect
      .poll(
        () =>
          client.push({ class: "Net", queue: "cp", args: [2] }).then(
            () => true,
            () => false,
          ),
        {
          timeout: MARGIN_MS,
        },
      )
      .toBe(true);
    const args = (await redis.lrange("queue:cp", 0, -1)).map((j) => JSON.parse(j).args[0] as number);
    expect(args.filter((a) => a >= 100)).toEqual([]);
  }, 60_000);
});
