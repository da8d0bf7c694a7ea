// Redis commands per job, from INFO commandstats: it counts every command
// Redis executed, those a Lua script runs (redis.call) included, from any
// connection. The harness resets the counters right before a measured window
// and reads them right after; the few commands it sends itself in between are
// named here and left out.
import type { Redis } from "ioredis";

/** Commands the harness itself issues inside a measured window. */
export const HARNESS_COMMANDS = new Set(["info", "config|resetstat", "config", "rename"]);

export async function resetCommandStats(redis: Redis): Promise<void> {
  await redis.config("RESETSTAT");
}

/** Calls per command (lower case, subcommands as `config|resetstat`). */
export async function readCommandStats(redis: Redis): Promise<Record<string, number>> {
  const text = await redis.info("commandstats");
  const out: Record<string, number> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) out[m[1]!] = Number(m[2]);
  }
  return out;
}

export interface CommandCount {
  total: number;
  /** Per command, without the harness's own. */
  byCommand: Record<string, number>;
}

export function countCommands(stats: Record<string, number>, extraExcluded: readonly string[] = []): CommandCount {
  const byCommand: Record<string, number> = {};
  let total = 0;
  for (const [cmd, n] of Object.entries(stats)) {
    if (HARNESS_COMMANDS.has(cmd) || extraExcluded.includes(cmd)) continue;
    byCommand[cmd] = n;
    total += n;
  }
  return { total, byCommand };
}
