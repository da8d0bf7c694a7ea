// The one way to run a Lua script. defineScript turns a script's source into a
// typed function `(redis, keys, args)`. Its first call on a connection sends
// the text (EVAL); later calls send its SHA1 (EVALSHA), and the text again on
// NOSCRIPT (after a restart or SCRIPT FLUSH), as Sidekiq's scripts are run.
// Every key a script touches is passed in `keys` (KEYS), so it also runs
// where undeclared keys are refused (Valkey, Dragonfly, cluster-safe
// scripting).
// Scripts go through ioredis' plain `call`, not its defineCommand: that makes
// a Command subclass for each script on each connection, so the code every
// command runs through (ioredis' Command methods and socket writes) meets a
// new object shape with each, and V8 drops and recompiles it each time. A
// reliable fetch worker, which runs a script a fetch, drained 18-28% faster
// at concurrency 10 on Node 20 without it (bench/results/script-commands.md).
import { createHash } from "node:crypto";
import type { Redis, RedisKey } from "ioredis";

/** Lua text that scripts share (local functions), put in front of each script that includes it. */
export interface LuaInclude {
  readonly name: string;
  readonly lua: string;
}

export type ScriptArg = string | number | Buffer;

export interface ScriptSource {
  /** The command's name on a connection, unique among the scripts. */
  name: string;
  /** Fragments the script calls, put before its text in this order. */
  includes?: readonly LuaInclude[];
  /** The script's own text. */
  lua: string;
  /** "buffer": bulk-string replies as Buffers, for jobs that must travel as raw bytes. Default: strings. */
  replies?: "string" | "buffer";
}

/** A script, ready to run on any connection. */
export interface Script<Keys extends readonly RedisKey[], Args extends readonly ScriptArg[], Result> {
  (redis: Redis, keys: Keys, args: Args): Promise<Result>;
  /** Its command's name on a connection. */
  readonly scriptName: string;
  /** The full text sent to Redis: includes, then the script. */
  readonly lua: string;
}

const names = new Set<string>();

/**
 * Defines a script. `Result` is what its reply decodes to; `Keys` and `Args`
 * may be tuples naming each KEYS and ARGV entry.
 */
export function defineScript<
  Result,
  Keys extends readonly RedisKey[] = readonly RedisKey[],
  Args extends readonly ScriptArg[] = readonly ScriptArg[],
>(source: ScriptSource): Script<Keys, Args, Result> {
  // Two scripts of one name would replace each other on a connection.
  if (names.has(source.name)) throw new Error(`a Lua script named ${source.name} is already defined`);
  names.add(source.name);
  const texts = [...(source.includes ?? []).map((i) => i.lua), source.lua];
  // Each text starts on a line of its own, so joining them keeps every line whole.
  if (texts.some((t) => !t.startsWith("\n")))
    throw new Error(`Lua script ${source.name}: each text must start with a newline`);
  const lua = texts.join("");
  const sha = scriptSha(lua, source.name);
  const buffers = source.replies === "buffer";
  const sent = new WeakSet<Redis>();
  const run = (redis: Redis, keys: Keys, args: Args): Promise<Result> => {
    if (!sent.has(redis)) {
      sent.add(redis);
      return send(redis, buffers, "eval", lua, keys, args) as Promise<Result>;
    }
    return evalBySha(redis, sha, lua, keys, args, buffers) as Promise<Result>;
  };
  return Object.assign(run, { scriptName: source.name, lua });
}

/** Every script this process has named by its SHA1, for error messages that only give the SHA1. */
const bySha = new Map<string, { name?: string; lua: string }>();

/** The SHA1 Redis names a script by (EVALSHA, SCRIPT EXISTS): hex of the text's bytes. */
export function scriptSha(lua: string, name?: string): string {
  const sha = createHash("sha1").update(lua).digest("hex");
  if (!bySha.get(sha)?.name) bySha.set(sha, name === undefined ? { lua } : { name, lua });
  return sha;
}

/** A script this process knows by its SHA1 (Redis 7.0 names a script's refused command by nothing else). */
export function scriptBySha(sha: string): { name?: string; lua: string } | undefined {
  return bySha.get(sha);
}

/** One EVAL or EVALSHA through ioredis' plain `call` (see above: no defineCommand). */
function send(
  redis: Redis,
  buffers: boolean,
  command: "eval" | "evalsha",
  script: string,
  keys: readonly RedisKey[],
  args: readonly ScriptArg[],
): Promise<unknown> {
  return buffers
    ? redis.callBuffer(command, script, keys.length, ...keys, ...args)
    : redis.call(command, script, keys.length, ...keys, ...args);
}

/**
 * Runs a script by its SHA1 (EVALSHA), and by its text (EVAL) when Redis does
 * not hold it (NOSCRIPT: after a restart, SCRIPT FLUSH, or on a server that
 * never saw it). `buffers`: bulk-string replies as Buffers.
 */
export function evalBySha(
  redis: Redis,
  sha: string,
  lua: string,
  keys: readonly RedisKey[],
  args: readonly ScriptArg[],
  buffers = false,
): Promise<unknown> {
  return send(redis, buffers, "evalsha", sha, keys, args).catch((e: unknown) => {
    if (!isNoScript(e)) throw e;
    return send(redis, buffers, "eval", lua, keys, args);
  });
}

/** Redis's reply when it does not hold a script sent by SHA1 (EVALSHA). */
function isNoScript(e: unknown): boolean {
  return e instanceof Error && e.message.startsWith("NOSCRIPT");
}
