import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { defineScript, type LuaInclude } from "../../src/core/redis/scripts/define-script.js";
import * as registry from "../../src/core/redis/scripts/index.js";

const twice: LuaInclude = { name: "twice", lua: "\nlocal function twice(s) return s .. s end" };

const echoKeyAndArgs = defineScript<string[], readonly [key: string], readonly [a: string, b: number]>({
  name: "testEchoKeyAndArgs",
  includes: [twice],
  lua: "\nreturn {KEYS[1], twice(ARGV[1]), ARGV[2]}",
});

const rawBytes = defineScript<Buffer, readonly [], readonly [Buffer]>({
  name: "testRawBytes",
  replies: "buffer",
  lua: "\nreturn ARGV[1]",
});

const failing = defineScript<never>({ name: "testFailing", lua: '\nreturn redis.error_reply("boom")' });

describe("defineScript (the one way to run a Lua script)", () => {
  it("puts the includes in front of the script's text", () => {
    expect(echoKeyAndArgs.lua).toBe(`${twice.lua}\nreturn {KEYS[1], twice(ARGV[1]), ARGV[2]}`);
    expect(echoKeyAndArgs.scriptName).toBe("testEchoKeyAndArgs");
  });

  it("refuses a second script of the same name (they would replace each other on a connection)", () => {
    expect(() => defineScript({ name: "testEchoKeyAndArgs", lua: "\nreturn 1" })).toThrow(
      "a Lua script named testEchoKeyAndArgs is already defined",
    );
  });

  it("refuses a text that does not start on a line of its own (joined to an include it would break a line)", () => {
    expect(() => defineScript({ name: "testNoNewline", includes: [twice], lua: "return 1" })).toThrow(
      "Lua script testNoNewline: each text must start with a newline",
    );
  });

  describe("on a real Redis", () => {
    let server: RedisServer;
    let redis: Redis;
    beforeAll(async () => {
      server = await startRedis({ databases: 1 });
      redis = new Redis(server.url);
    });
    afterAll(async () => {
      redis?.disconnect();
      await server?.stop();
    });

    it("passes KEYS and ARGV and resolves to the reply", async () => {
      expect(await echoKeyAndArgs(redis, ["k"], ["ab", 3])).toEqual(["k", "abab", "3"]);
    });

    it("sends the text once per connection, then only its SHA1", async () => {
      const other = new Redis(server.url);
      try {
        await redis.config("RESETSTAT");
        for (let i = 0; i < 3; i++) await echoKeyAndArgs(other, ["k"], ["x", i]);
        const stats = await redis.info("commandstats");
        const calls = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
        expect([calls("eval"), calls("evalsha")]).toEqual([1, 2]);
      } finally {
        other.disconnect();
      }
    });

    it("rejects with the script's own error, by text and by SHA1", async () => {
      const other = new Redis(server.url);
      try {
        await expect(failing(other, [], [])).rejects.toThrow("boom");
        await expect(failing(other, [], [])).rejects.toThrow("boom");
      } finally {
        other.disconnect();
      }
    });

    it("sends the text again after the server forgot it (SCRIPT FLUSH)", async () => {
      await echoKeyAndArgs(redis, ["k"], ["a", 1]);
      await redis.script("FLUSH");
      expect(await echoKeyAndArgs(redis, ["k"], ["b", 2])).toEqual(["k", "bb", "2"]);
    });

    it('returns raw bytes with replies: "buffer"', async () => {
      const bytes = Buffer.from([0xff, 0x00, 0xc3]);
      expect(Buffer.compare(await rawBytes(redis, [], [bytes]), bytes)).toBe(0);
    });

    it("every script of the registry compiles", async () => {
      const scripts = Object.values(registry).flatMap((s) => ("lua" in s ? [s] : []));
      // Counted, so a script added to the registry is compiled here too.
      expect(scripts.length).toBe(15);
      for (const s of scripts) expect(await redis.script("LOAD", s.lua)).toMatch(/^[0-9a-f]{40}$/);
    });
  });
});
