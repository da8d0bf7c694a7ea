// Sidekiq's start-up check of Redis's maxmemory-policy: any policy but
// noeviction lets Redis delete jobs silently under memory pressure, so the
// worker and `sidekiq-bridge stats` warn as Sidekiq's CLI does. Redis
// Enterprise Cloud answers "" for its policy; Sidekiq 7 and 8 accept that.
import type { Redis } from "ioredis";

/** The server's maxmemory-policy from INFO memory, "" when it does not say. */
export async function maxmemoryPolicy(redis: Redis): Promise<string> {
  const info = await redis.info("memory");
  return /maxmemory_policy:([^\r\n]*)/.exec(info)?.[1]?.trim() ?? "";
}

/** Sidekiq's warning for this policy, or undefined when jobs are safe from eviction. */
export function evictionWarning(policy: string): string | undefined {
  if (policy === "noeviction" || policy === "") return undefined;
  return (
    `WARNING: Your Redis instance will evict Sidekiq data under heavy load. ` +
    `The 'noeviction' maxmemory policy is recommended (current policy: '${policy}'). ` +
    `See: https://github.com/sidekiq/sidekiq/wiki/Using-Redis#memory`
  );
}

/** Reads the policy and returns the warning, if any; a server that refuses INFO gets none. */
export async function checkEvictionPolicy(redis: Redis): Promise<string | undefined> {
  try {
    return evictionWarning(await maxmemoryPolicy(redis));
  } catch {
    // INFO renamed or refused by an ACL: Sidekiq would fail here; the bridge just cannot tell.
    return undefined;
  }
}
