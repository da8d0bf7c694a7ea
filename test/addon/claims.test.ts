// The add-on pollers' recoverable claims on a real Redis: the claim is the
// gem's ZADD, only its winner gets an in-flight entry, the push deletes the
// entry and pushes in one step, and recovery finishes a dead owner's entry
// once, while the owner (were it alive after all) then pushes nothing.
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { AddonClaims, type PreparedClaim } from "../../src/addons/pollers/claims.js";
import { ADDON_CLAIMS } from "../../src/core/wire/bridge-keys.js";

describe("recoverable add-on claims", () => {
  let server: RedisServer;
  let redis: Redis;
  const target = { set: "cron_job:default:j:enqueued", score: "1764190000.0", member: "2025-11-26T20:46:40Z" };
  const job: PreparedClaim = { queue: "q", payload: '{"class":"J","jid":"abc"}', jid: "abc" };
  // A live owner (heartbeat key present, this pid) and a dead one (no heartbeat key).
  const live = `testhost:${process.pid}:aaaaaaaaaaaa`;
  const dead = "otherhost:1:bbbbbbbbbbbb";

  beforeAll(async () => {
    server = await startRedis({ databases: 1 });
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  beforeEach(async () => {
    await redis.flushdb();
    await redis.hset(live, "beat", "1");
  });

  it("only the ZADD's winner gets an in-flight entry; its push empties it and pushes once", async () => {
    const a = new AddonClaims(redis, "cron", live, "testhost");
    const won = await a.claim(target, { name: "j" });
    expect(won).toBeDefined();
    expect(await new AddonClaims(redis, "cron", dead, "otherhost").claim(target, { name: "j" })).toBeUndefined();
    expect(await redis.zscore(target.set, target.member)).toBe("1764190000");
    expect(await a.push(won!, job)).toBe(true);
    expect(await a.push(won!, job)).toBe(false);
    expect(await redis.lrange("queue:q", 0, -1)).toEqual([job.payload]);
    expect(await redis.smembers("queues")).toEqual(["q"]);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(0);
  });

  it("recovery pushes a dead owner's stored payload once; the owner, back, pushes nothing", async () => {
    const owner = new AddonClaims(redis, "cron", dead, "otherhost");
    const won = (await owner.claim(target, { name: "j" }))!;
    // The owner stored its payload (step 2), then "died" before step 3: replayed by hand.
    const rescuer = new AddonClaims(redis, "cron", live, "testhost");
    const stored = JSON.stringify({ ...won.entry, ...job });
    await redis.hset(ADDON_CLAIMS, won.field, stored);
    const prepared: string[] = [];
    const recovered = await rescuer.recover(async (info) => (prepared.push(String(info.name)), job));
    expect(recovered.map((r) => r.owner)).toEqual([dead]);
    expect(prepared).toEqual([]); // the stored payload, not a fresh one
    expect(await owner.push({ ...won, raw: stored }, job)).toBe(false);
    expect(await rescuer.recover(async () => job)).toEqual([]);
    expect(await redis.lrange("queue:q", 0, -1)).toEqual([job.payload]);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(0);
  });

  it("a dead owner's claim without a payload is prepared afresh; a live owner's is left alone", async () => {
    await new AddonClaims(redis, "cron", dead, "otherhost").claim(target, { name: "j" });
    const mine = new AddonClaims(redis, "cron", live, "testhost");
    await new AddonClaims(redis, "cron", `testhost:${process.pid}:cccccccccccc`, "testhost").claim(
      { ...target, member: "other" },
      { name: "k" },
    );
    await redis.hset(`testhost:${process.pid}:cccccccccccc`, "beat", "1");
    const recovered = await mine.recover(async (info) => ({ ...job, jid: String(info.name) }));
    expect(recovered.map((r) => r.info.name)).toEqual(["j"]);
    expect(await redis.llen("queue:q")).toBe(1);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(1);
  });

  it("an entry its live owner no longer works on (its push lost in a failover) is finished by the owner, once", async () => {
    const a = new AddonClaims(redis, "cron", live, "testhost");
    const won = (await a.claim(target, { name: "j" }))!;
    // In flight: the owner's own recovery leaves it alone.
    expect(await a.recover(async () => job)).toEqual([]);
    const atClaim = (await redis.hget(ADDON_CLAIMS, won.field))!;
    expect(await a.push(won, job)).toBe(true);
    // The promoted replica had the claim and its entry but not the push.
    await redis.del("queue:q");
    await redis.hset(ADDON_CLAIMS, won.field, atClaim);
    const other = `testhost:${process.pid}:dddddddddddd`;
    await redis.hset(other, "beat", "1");
    expect(await new AddonClaims(redis, "cron", other, "testhost").recover(async () => job)).toEqual([]);
    const recovered = await a.recover(async () => job);
    expect(recovered.map((r) => r.info.name)).toEqual(["j"]);
    expect(await a.recover(async () => job)).toEqual([]);
    expect(await redis.lrange("queue:q", 0, -1)).toEqual([job.payload]);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(0);
  });

  it("a claim sent again after its reply was lost leaves no entry behind for good", async () => {
    const a = new AddonClaims(redis, "scheduler", live, "testhost");
    // The first send ran (ZADD and entry), its reply never came: the second finds the member there.
    await redis.zadd(target.set, target.score, target.member);
    await redis.hset(
      ADDON_CLAIMS,
      `scheduler|${target.set}|${target.member}`,
      JSON.stringify({ owner: live, info: { name: "j" } }),
    );
    expect(await a.claim(target, { name: "j" })).toBeUndefined();
    expect((await a.recover(async () => job)).length).toBe(1);
    expect(await redis.lrange("queue:q", 0, -1)).toEqual([job.payload]);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(0);
  });

  it("a job that cannot be prepared gives the claim up: claimed, nothing pushed, no entry left", async () => {
    const a = new AddonClaims(redis, "scheduler", live, "testhost");
    const won = (await a.claim({ ...target, expire: 60 }, { name: "j" }))!;
    await expect(a.pushPrepared(won, () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
    expect(await redis.ttl(target.set)).toBeGreaterThan(0);
    expect(await redis.llen("queue:q")).toBe(0);
    expect(await redis.hlen(ADDON_CLAIMS)).toBe(0);
  });
});
