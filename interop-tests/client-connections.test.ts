// The client reaches Redis the ways users run it (ACL users, TLS,
// several shards) and follows Sidekiq's retry-once rule after READONLY.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { makeTestCerts, type TestCerts } from "../harness/tls.js";
import { freePort, startRedis, type RedisServer } from "../harness/redis-server.js";
import { backend, describeEachSidekiq } from "./support/harness.js";

describeEachSidekiq("client connections", (sk) => {
  const servers: RedisServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it("ACL user and password in the URL; Ruby reads the job through its API with the same login", async () => {
    const redis = await startRedis({ config: ["user default off", "user bridge on >s3cret ~* &* +@all"] });
    servers.push(redis);
    const url = `redis://bridge:s3cret@127.0.0.1:${redis.port}/0`;
    const c = new Client({ redis: url, dialect: sk.target.version });
    const jid = await c.job("RecordJob", { queue: "acl" }).performAsync(1);
    await c.close();
    const r = await backend().runRuby(sk.target, "eval.rb", [`Sidekiq::Queue.new("acl").first&.jid`], {
      env: { REDIS_URL: url },
    });
    expect(r.stdout).toContain(`__BRIDGE_RESULT__ "${jid}"`);
    // And without the password Redis refuses us: the login really was used.
    const anon = new Redis(`redis://127.0.0.1:${redis.port}/0`, {
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    anon.on("error", () => {}); // the refusal is what we assert below
    await expect(anon.llen("queue:acl")).rejects.toThrow(/NOAUTH/);
    anon.disconnect();
  });

  it("several shards: each queue's jobs land in the Redis its route names, readable by Ruby there", async () => {
    const other = await startRedis();
    servers.push(other);
    const c = new Client({
      redis: sk.url,
      dialect: sk.target.version,
      route: (q) => (q === "critical" ? `${other.url}/0` : sk.url),
    });
    const a = await c.job("RecordJob", { queue: "routine" }).performAsync(1);
    const b = await c.job("RecordJob", { queue: "critical" }).performAsync(2);
    await c.close();
    expect(await sk.ruby(`Sidekiq::Queue.new("routine").map(&:jid)`)).toEqual([a]);
    const r = await backend().runRuby(sk.target, "eval.rb", [`Sidekiq::Queue.new("critical").map(&:jid)`], {
      env: { REDIS_URL: `${other.url}/0` },
    });
    expect(r.stdout).toContain(`__BRIDGE_RESULT__ ["${b}"]`);
    expect(await sk.redis.exists("queue:critical")).toBe(0);
  });
});

describe("client: TLS and READONLY (Redis only, no Ruby needed)", () => {
  let certs: TestCerts;
  beforeAll(() => {
    certs = makeTestCerts();
  });
  afterAll(() => certs.remove());

  it("pushes over rediss:// with a CA, and refuses a server it cannot verify", async () => {
    const tlsPort = await freePort();
    const redis = await startRedis({ config: certs.redisConfig(tlsPort) });
    try {
      const c = new Client({ redis: { url: `rediss://127.0.0.1:${tlsPort}/0`, tls: { ca: certs.ca } }, dialect: 8 });
      const jid = await c.job("RecordJob", { queue: "tls" }).performAsync(1);
      await c.close();
      const plain = new Redis(`${redis.url}/0`);
      expect(await plain.lindex("queue:tls", 0)).toContain(jid);
      plain.disconnect();
      const untrusted = new Client({
        redis: {
          url: `rediss://127.0.0.1:${tlsPort}/0`,
          ioredis: { maxRetriesPerRequest: 0, retryStrategy: () => null },
        },
        dialect: 8,
      });
      await expect(untrusted.job("RecordJob", { queue: "tls" }).performAsync(2)).rejects.toThrow();
      await untrusted.close();
    } finally {
      await redis.stop();
    }
  });

  it("retries a push once after READONLY, as Sidekiq does, then reports the error", async () => {
    const master = await startRedis();
    const replica = await startRedis({ config: [`replicaof 127.0.0.1 ${master.port}`] });
    try {
      const c = new Client({
        redis: { url: `${replica.url}/0`, ioredis: { reconnectOnError: () => false } },
        dialect: 8,
      });
      await expect(c.job("RecordJob").performAsync(1)).rejects.toThrow(/READONLY/);
      await c.close();
      const probe = new Redis(replica.url);
      const stats = await probe.info("commandstats");
      await probe.quit();
      // SADD and LPUSH were each refused twice: the first attempt and the one retry.
      expect(stats).toMatch(/cmdstat_lpush:calls=0,.*rejected_calls=2/);
      expect(stats).toMatch(/cmdstat_sadd:calls=0,.*rejected_calls=2/);
    } finally {
      await replica.stop();
      await master.stop();
    }
  });
});
