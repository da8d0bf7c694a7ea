// The ACL line operators give the bridge's Redis user is exactly what src/
// sends: a new command in the code (or in a Lua script) fails here until it
// is on the list, and docs/OPERATING.md shows the line the list makes.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ALWAYS_ALLOWED,
  BRIDGE_COMMANDS,
  bridgeAclRules,
  permissionError,
  permissionLine,
  permissionLogFilter,
  RedisPermissionError,
} from "../../src/core/redis/acl.js";
import { requeueFromWorking } from "../../src/core/redis/scripts/index.js";
import { scriptSha } from "../../src/core/redis/scripts/define-script.js";
import { scanRedisCommands } from "./command-scan.js";

/** What ioredis sends by itself on connect: INFO (its ready check), SELECT (a database other than 0). */
const IOREDIS_ON_CONNECT = ["info", "select"];

describe("the bridge's ACL", () => {
  it("lists every command src/ sends (ioredis calls and the Lua scripts' calls), and nothing else", () => {
    const scan = scanRedisCommands();
    expect(scan.unknown).toEqual([]);
    const needed = new Set([...scan.commands.keys(), ...IOREDIS_ON_CONNECT]);
    for (const c of ALWAYS_ALLOWED) needed.delete(c);
    const missing = [...needed].filter((c) => !BRIDGE_COMMANDS.includes(c));
    const unused = BRIDGE_COMMANDS.filter((c) => !needed.has(c));
    // Each missing command with where src/ sends it: add it to BRIDGE_COMMANDS (src/core/redis/acl.ts).
    expect(missing.map((c) => `${c}: ${scan.commands.get(c)?.slice(0, 3).join(", ")}`)).toEqual([]);
    expect(unused).toEqual([]);
    expect(BRIDGE_COMMANDS).toEqual([...new Set(BRIDGE_COMMANDS)].sort());
  }, 120_000);

  it("docs/OPERATING.md shows the line made from the list", () => {
    const doc = readFileSync(new URL("../../docs/OPERATING.md", import.meta.url), "utf8");
    const lines = doc.split("\n").filter((l) => l.startsWith("user bridge on "));
    expect(lines).toEqual([`user bridge on >CHANGE-ME ${bridgeAclRules()}`]);
  });
});

describe("a command the user may not run: one line naming the permission", () => {
  it("reads Redis 7.0's and Valkey's refusals, of a command, a script's command, a key and a channel", () => {
    const cases: Array<[string, RegExp]> = [
      ["NOPERM this user has no permissions to run the 'keys' command", /may not run 'KEYS' \(NOPERM\): add \+keys /],
      [
        "NOPERM User bridge has no permissions to run the 'blmpop' command",
        /may not run 'BLMPOP' \(NOPERM\): add \+blmpop /,
      ],
      [
        "NOPERM this user has no permissions to run the 'client|setname' command",
        /may not run 'CLIENT\|SETNAME' \(NOPERM\): add \+client\|setname /,
      ],
      [
        "ERR ACL failure in script: User bridge has no permissions to run the 'lset' command script: 5fdb18, on @user_script:1.",
        /may not run 'LSET' \(from a Lua script\) \(NOPERM\): add \+lset /,
      ],
      [
        "ERR The user executing the script can't run this command or subcommand script: 5fdb18, on @user_script:1.",
        /may not run a command a Lua script calls \(NOPERM\)/,
      ],
      ["NOPERM this user has no permissions to access one of the keys used as arguments", /its ACL needs ~\*/],
      ["NOPERM No permissions to access a key", /its ACL needs ~\*/],
      ["NOPERM No permissions to access a channel", /add &uniquejobs:changelog /],
    ];
    for (const [reply, expected] of cases) {
      const line = permissionLine(reply, "bridge");
      expect(line).toMatch(/^Redis user 'bridge' may not /);
      expect(line).toMatch(expected);
      expect(line).toMatch(/see docs\/OPERATING\.md \(Redis ACL\)$/);
    }
    expect(permissionLine("NOPERM this user has no permissions to run the 'get' command", undefined)).toMatch(
      /^Redis user 'default' /,
    );
    expect(permissionLine("WRONGTYPE Operation against a key holding the wrong kind of value", "bridge")).toBe(
      undefined,
    );
  });

  it("names the script and the commands it calls when Redis 7.0 gives only the script's SHA1", () => {
    const sha = scriptSha(requeueFromWorking.lua);
    const reply = `ERR The user executing the script can't run this command or subcommand script: ${sha}, on @user_script:9.`;
    expect(permissionLine(reply, "bridge")).toBe(
      "Redis user 'bridge' may not run a command Lua script bridgePutBack calls (LREM HDEL, or one its arguments name) (NOPERM): give it every command of the ACL line, see docs/OPERATING.md (Redis ACL)",
    );
  });

  it("turns the reply error into a RedisPermissionError that keeps it as its cause", () => {
    const reply = new Error("NOPERM this user has no permissions to run the 'keys' command");
    const e = permissionError(reply, "bridge");
    expect(e).toBeInstanceOf(RedisPermissionError);
    expect(e?.cause).toBe(reply);
    expect(permissionError(new Error("ERR syntax error"), "bridge")).toBe(undefined);
  });

  it("a log line quoting a refusal becomes the one line, once however often it comes", () => {
    const filter = permissionLogFilter("bridge");
    const error = "NOPERM this user has no permissions to run the 'blmpop' command";
    expect(filter("fetch failed; retrying", { error })).toMatch(/^Redis user 'bridge' may not run 'BLMPOP'/);
    expect(filter("fetch failed; retrying", { error })).toBe(null);
    expect(filter(`heartbeat: ${error.replace("blmpop", "hset")}`)).toMatch(/may not run 'HSET'/);
    expect(filter("fetch failed; retrying", { error: "ECONNRESET" })).toBe(undefined);
  });
});
