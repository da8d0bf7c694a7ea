import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { connectRedis } from "../../src/core/redis/connection.js";

describe("connectRedis", () => {
  it("uses an app's ioredis client as is, also one from another copy of the package", () => {
    const mine = new Redis({ lazyConnect: true });
    expect(connectRedis(mine)).toEqual({ redis: mine, owned: false });
    // What a second copy of ioredis looks like from here: the same methods, another class.
    const foreign = Object.assign(Object.create({ duplicate() {}, pipeline() {} }), { options: {} });
    expect(connectRedis(foreign).redis).toBe(foreign);
    expect(connectRedis(foreign).owned).toBe(false);
    mine.disconnect();
  });

  it("opens (and owns) a connection for a URL or options", () => {
    const { redis, owned } = connectRedis({ url: "redis://127.0.0.1:1/3", ioredis: { lazyConnect: true } });
    expect(owned).toBe(true);
    expect(redis.options.db).toBe(3);
    redis.disconnect();
  });
});

describe("how ioredis is loaded", () => {
  // Imported from an ES module, ioredis (CommonJS) went through Node 20's ES
  // module loader at 4-6 MB more RSS in every process (bench/README.md,
  // "Memory"). connection.ts require()s it; everything else takes its values
  // from there and only types from "ioredis".
  it("no file in src/ imports a value from ioredis by import (connection.ts require()s it)", () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), "../../src");
    const offenders: string[] = [];
    for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts")) continue;
      const text = readFileSync(join(root, file), "utf8");
      for (const m of text.matchAll(/^import\s+(type\s+)?([^;]*?)\s+from\s+"ioredis";/gms)) {
        const names = m[2]!.replace(/^\{|\}$/g, "");
        const values = m[1] ? [] : names.split(",").filter((n) => n.trim() && !/^\s*type\s/.test(n));
        if (values.length) offenders.push(`${file}: ${m[0]}`);
      }
      if (/\bimport\(\s*"ioredis"\s*\)/.test(text.replace(/typeof import\(\s*"ioredis"\s*\)/g, "")))
        offenders.push(`${file}: import("ioredis")`);
    }
    expect(offenders).toEqual([]);
  });
});
