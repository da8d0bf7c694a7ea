// The Redis ACL a user of the bridge needs, as data, and the one line that
// says which permission is missing when Redis refuses a command (NOPERM).
// docs/OPERATING.md ("Redis ACL: a user with only what the bridge needs") shows
// the line made from this list; test/redis/acl.test.ts fails when src/
// sends a command that is not on it, or the list names one nothing sends.
import { scriptBySha } from "./scripts/define-script.js";

/**
 * Every command the worker, client, API, dashboard, CLI, migration tools and
 * add-ons send, with the commands their Lua scripts call (Redis checks those
 * against the user's ACL as well). AUTH, HELLO and QUIT need no permission.
 * The connection itself: INFO (ioredis' ready check), SELECT (a database
 * other than 0), PING. CLIENT SETINFO is not sent (connection.ts turns it
 * off), so no CLIENT subcommand is needed.
 */
export const BRIDGE_COMMANDS: readonly string[] = [
  "bitfield",
  "bitfield_ro",
  // Redis 7.0+: on 6.2 the fetch uses BRPOP, and the line leaves +blmpop out.
  "blmpop",
  "brpop",
  "brpoplpush",
  "del",
  "eval",
  "evalsha",
  "exec",
  "exists",
  "expire",
  "get",
  "hdel",
  "hexists",
  "hget",
  "hgetall",
  "hincrby",
  "hkeys",
  "hlen",
  "hmget",
  "hmset",
  "hscan",
  "hset",
  "hsetnx",
  "incrby",
  "info",
  "lindex",
  "llen",
  "lmove",
  "lpos",
  "lpush",
  "lrange",
  "lrem",
  "lset",
  "ltrim",
  "mget",
  "multi",
  "pexpire",
  "ping",
  "pttl",
  "publish",
  "rename",
  "rpop",
  "rpoplpush",
  "rpush",
  "sadd",
  "scan",
  "scard",
  "select",
  "set",
  "sismember",
  "smembers",
  "srem",
  "sscan",
  "sunionstore",
  "type",
  "unlink",
  "unwatch",
  "watch",
  "zadd",
  "zcard",
  "zrange",
  "zrangebyscore",
  "zrem",
  "zremrangebyrank",
  "zremrangebyscore",
  "zrevrange",
  "zscan",
  "zscore",
];

/** Commands Redis lets any logged-in user run: they need no rule. */
export const ALWAYS_ALLOWED: readonly string[] = ["auth", "hello", "quit"];

/**
 * Keys: all of them. Sidekiq's keys share no prefix ("queue:*", "schedule",
 * "processes", and each process's "<hostname>:<pid>:<nonce>"), so no
 * pattern narrower than `~*` holds them: give the fleet its own Redis (ACLs
 * do not restrict SELECT, so a database is no wall). Channels: the one sidekiq-unique-jobs 8 publishes its changelog
 * on (from its Lua).
 */
export const BRIDGE_KEYS = "~*";
export const BRIDGE_CHANNELS = "&uniquejobs:changelog";

/** The rules after `user <name> on >password` (Redis 7.0+ and Valkey; on 6.2 leave out +blmpop). */
export function bridgeAclRules(): string {
  return [BRIDGE_KEYS, "resetchannels", BRIDGE_CHANNELS, "-@all", ...BRIDGE_COMMANDS.map((c) => `+${c}`)].join(" ");
}

/** Where the rules are explained, for error messages. */
const SEE = "see docs/OPERATING.md (Redis ACL)";

// Redis 7.0: "NOPERM this user has no permissions to run the 'get' command";
// 7.2 and Valkey: "NOPERM User bridge has no permissions to run ...", and in a
// script "ERR ACL failure in script: User bridge has no permissions to run ...".
const COMMAND_DENIED = /(?:NOPERM|ACL failure in script:).*? has no permissions to run the '([^']+)' command/;
// Redis 7.0 names no command for one a script calls, only the script's SHA1.
const SCRIPT_DENIED = /The user executing the script can't run this command or subcommand/;
const KEY_DENIED = /^NOPERM .*(?:access one of the keys|access a key)/;
const CHANNEL_DENIED = /^NOPERM .*(?:access one of the channels|access a channel)/;

/** "Lua script bridgePutBack calls (LREM HDEL, or one its arguments name)", from the SHA1 in Redis 7.0's message when this process knows the script. */
function scriptCalling(text: string): string {
  const sha = /script: ([0-9a-f]{40})/.exec(text)?.[1];
  const script = sha === undefined ? undefined : scriptBySha(sha);
  if (!script) return "a Lua script calls";
  const named = [...script.lua.matchAll(/redis\.p?call\(\s*("([^"]+)"|'([^']+)'|[^"'\s])/g)];
  const calls = new Set(named.flatMap((m) => ((m[2] ?? m[3]) ? [(m[2] ?? m[3])!.toUpperCase()] : [])));
  const more = named.some((m) => m[2] === undefined && m[3] === undefined) ? ", or one its arguments name" : "";
  return `Lua script ${script.name ?? sha!.slice(0, 12)} calls (${[...calls].join(" ")}${more})`;
}

/** Redis refused a command for the user's ACL; `message` is one line naming what to add. */
export class RedisPermissionError extends Error {
  override name = "RedisPermissionError";
}

/**
 * The one line for a refusal of `user`'s ACL, found in an error's message (a
 * reply error, or a log line quoting one); undefined for anything else.
 */
export function permissionLine(text: string, user: string | undefined): string | undefined {
  const who = `Redis user '${user || "default"}'`;
  const command = COMMAND_DENIED.exec(text)?.[1];
  if (command !== undefined) {
    const inScript = text.includes("ACL failure in script") ? " (from a Lua script)" : "";
    return `${who} may not run '${command.toUpperCase()}'${inScript} (NOPERM): add +${command.toLowerCase()} to its ACL, ${SEE}`;
  }
  if (SCRIPT_DENIED.test(text))
    return `${who} may not run a command ${scriptCalling(text)} (NOPERM): give it every command of the ACL line, ${SEE}`;
  if (KEY_DENIED.test(text))
    return `${who} may not access a key Sidekiq uses (NOPERM): its ACL needs ${BRIDGE_KEYS}, ${SEE}`;
  if (CHANNEL_DENIED.test(text))
    return `${who} may not publish sidekiq-unique-jobs' changelog (NOPERM): add ${BRIDGE_CHANNELS} to its ACL, ${SEE}`;
  return undefined;
}

/** True for Redis's refusal of a command, key or channel for the user's ACL. */
export function isPermissionDenied(e: unknown): boolean {
  return permissionLine((e as Error | undefined)?.message ?? "", undefined) !== undefined;
}

/** `e` as a RedisPermissionError when it is an ACL refusal; undefined otherwise. */
export function permissionError(e: unknown, user: string | undefined): RedisPermissionError | undefined {
  if (e instanceof RedisPermissionError) return e;
  const line = permissionLine((e as Error | undefined)?.message ?? "", user);
  return line === undefined ? undefined : new RedisPermissionError(line, { cause: e });
}

/**
 * For a logger: the one line when a log line quotes an ACL refusal (in its
 * message or its `error` field), the first time that line comes; `null` to
 * drop a repeat (a fetch retrying logs it on every attempt); undefined when
 * the line is not about a refusal.
 */
export function permissionLogFilter(
  user: string | undefined,
): (message: string, ctx?: Record<string, unknown>) => string | null | undefined {
  const seen = new Set<string>();
  return (message, ctx) => {
    const error = ctx?.error;
    const line = permissionLine(message, user) ?? (typeof error === "string" ? permissionLine(error, user) : undefined);
    if (line === undefined) return undefined;
    if (seen.has(line)) return null;
    seen.add(line);
    return line;
  };
}
