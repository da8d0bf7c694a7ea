// The worker over an ACL login and over TLS, and it never prints the password.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";
import { freePort, startRedis, type RedisServer } from "../harness/redis-server.js";
import { makeTestCerts, type TestCerts } from "../harness/tls.js";

describe("worker connections: ACL user over TLS", () => {
  let certs: TestCerts;
  let server: RedisServer;
  let tlsPort = 0;
  beforeAll(async () => {
    certs = makeTestCerts();
    tlsPort = await freePort();
    server = await startRedis({
      config: [...certs.redisConfig(tlsPort), "user default off", "user bridge on >s3cret-pw ~* &* +@all"],
    });
  });
  afterAll(async () => {
    await server.stop();
    certs.remove();
  });

  it("runs jobs, reports failures and logs without ever showing the password", async () => {
    const lines: string[] = [];
    const log = (l: string) => (m: string, ctx?: Record<string, unknown>) =>
      lines.push(`${l} ${m} ${JSON.stringify(ctx ?? {})}`);
    const logger: Logger = { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
    const redis = { url: `rediss://bridge:s3cret-pw@127.0.0.1:${tlsPort}/0`, tls: { ca: certs.ca } };
    const w = new Worker({
      redis,
      dialect: 8,
      queues: ["secure"],
      concurrency: 2,
      scheduler: false,
      timeout: 3,
      logger,
    });
    const done: number[] = [];
    w.register<[number]>("SecureJob", ([n]) => {
      if (n < 0) throw new Error("negative");
      done.push(n);
    });
    await w.start();
    const c = new Client({ redis, dialect: 8 });
    await c.job("SecureJob", { queue: "secure" }).performBulk([[1], [2], [-1]]);
    await c.close();
    const check = new Redis({
      port: tlsPort,
      host: "127.0.0.1",
      username: "bridge",
      password: "s3cret-pw",
      tls: { ca: certs.ca },
    });
    const deadline = Date.now() + 20_000;
    while ((done.length < 2 || (await check.zcard("retry")) < 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await w.stop();
    expect(done.sort()).toEqual([1, 2]);
    expect(await check.zcard("retry")).toBe(1);
    check.disconnect();
    expect(lines.some((l) => l.includes("started"))).toBe(true);
    expect(lines.join("\n")).not.toContain("s3cret-pw");
  });
});
