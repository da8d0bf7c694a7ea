// The embedded scripts are the gem's files, byte for byte: their SHA1s are
// the ones Ruby's RedisPrescription sends, so either side's EVALSHA finds a
// script the other loaded.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PEERS_SRC } from "../../harness/local-backend.js";
import { CONCURRENCY_LUA_1_5, CONCURRENCY_LUA_2_1, THRESHOLD_LUA } from "../../src/addons/sidekiq-throttled/lua.js";
import { throttledScriptShas } from "../../src/addons/sidekiq-throttled/scripts.js";

const gemFile = (release: string, name: string) =>
  readFileSync(join(PEERS_SRC, `sidekiq-throttled-${release}/lib/sidekiq/throttled/strategy/${name}`), "utf8");
const sha1 = (s: string) => createHash("sha1").update(s).digest("hex");

describe("sidekiq-throttled's Lua, as the gem ships it", () => {
  it("2.1.0's and 1.5.2's concurrency scripts and their common threshold script are the gem's files", () => {
    expect(CONCURRENCY_LUA_2_1).toBe(gemFile("2.1.0", "concurrency.lua"));
    expect(CONCURRENCY_LUA_1_5).toBe(gemFile("1.5.2", "concurrency.lua"));
    expect(THRESHOLD_LUA).toBe(gemFile("2.1.0", "threshold.lua"));
    expect(THRESHOLD_LUA).toBe(gemFile("1.5.2", "threshold.lua"));
  });

  it("each script is run by the SHA1 of the gem's file (RedisPrescription's digest)", () => {
    expect(throttledScriptShas()).toEqual({
      concurrency1: sha1(gemFile("1.5.2", "concurrency.lua")),
      concurrency2: sha1(gemFile("2.1.0", "concurrency.lua")),
      threshold: sha1(gemFile("2.1.0", "threshold.lua")),
    });
  });
});
