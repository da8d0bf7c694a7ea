// What the Redis server can do, read once from INFO: fetch uses BLMPOP (7.0+)
// and RPOP with a count (6.2+) when present, and the one-job commands otherwise.
import type { Redis } from "ioredis";
import { versionAtLeast } from "../../wire/dialect.js";

export interface ServerFeatures {
  /** BLMPOP / LMPOP (Redis 7.0+, Valkey). Cleared if the server refuses it after all. */
  lmpop: boolean;
  /** RPOP key count (Redis 6.2+). */
  popCount: boolean;
}

export function featuresOf(redisVersion: string | undefined): ServerFeatures {
  const v = redisVersion ?? "0.0.0";
  return { lmpop: versionAtLeast(v, "7.0"), popCount: versionAtLeast(v, "6.2") };
}

export async function detectFeatures(redis: Redis): Promise<ServerFeatures> {
  const info = await redis.info("server");
  return featuresOf(/redis_version:([^\r\n]+)/.exec(info)?.[1]);
}

export function isUnknownCommand(e: unknown): boolean {
  return /unknown command/i.test((e as Error)?.message ?? "");
}
