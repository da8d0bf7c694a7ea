// Runs the gem's Lua scripts by SHA, loading them on a NOSCRIPT reply, with
// the arguments the gem's Script::Caller appends to every call.
import type { Redis } from "ioredis";
import { evalBySha, scriptSha } from "../../core/redis/scripts/define-script.js";
import { nowSecondsF } from "../../core/wire/timestamps.js";

const shas = new Map<string, string>();

function sha1(lua: string): string {
  let sha = shas.get(lua);
  if (!sha) shas.set(lua, (sha = scriptSha(lua)));
  return sha;
}

export type ScriptArg = string | number;

export function runScript(
  redis: Redis,
  lua: string,
  keys: readonly string[],
  argv: readonly ScriptArg[],
): Promise<unknown> {
  return evalBySha(redis, sha1(lua), lua, keys, argv);
}

/**
 * What Script::Caller#do_call appends: now_f, debug_lua (off), max_history,
 * the script's name (the changelog's `script` field) and the Redis version the
 * gem read at boot ("0.0.0" until it has; only delete_by_digest parses it).
 */
export function injected(scriptName: string, maxHistory: number): ScriptArg[] {
  // The gem's now_f, to the microsecond: the changelog is ordered by it (ms would tie and reorder).
  return [nowSecondsF(), 0, maxHistory, scriptName, "0.0.0"];
}
