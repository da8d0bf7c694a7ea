// Removing a lock outright, as the gem's Digests#delete_by_digest does (its
// death handler and the replace strategy use it).
import type { Redis } from "ioredis";
import type { UniqueJobsConfig } from "./config.js";
import { DIGESTS } from "./locksmith.js";
import { V8_DELETE_BY_DIGEST } from "./lua-v8.js";
import { injected, runScript } from "./scripts.js";

/** Deletes one sidekiq-unique-jobs lock (all its keys) by digest, as the gem's Digests#delete_by_digest. */
export async function deleteByDigest(
  redis: Redis,
  digest: string,
  cfg: UniqueJobsConfig,
  opts: { queuetime?: boolean; runtime?: boolean } = {},
): Promise<number> {
  if (cfg.gem === 9) {
    const r = await redis.multi().unlink(`${digest}:LOCKED`).zrem(DIGESTS, digest).exec();
    return Number(r?.[0]?.[1] ?? 0);
  }
  // delete_by_digest.lua takes four queue-time keys, four run-time keys and
  // the digests set; a side left out is four empty key names, as in Ruby.
  const side = (on: boolean, d: string) => (on ? [d, `${d}:QUEUED`, `${d}:PRIMED`, `${d}:LOCKED`] : ["", "", "", ""]);
  const keys = [...side(opts.queuetime ?? true, digest), ...side(opts.runtime ?? true, `${digest}:RUN`), DIGESTS];
  return Number(await runScript(redis, V8_DELETE_BY_DIGEST, keys, injected("delete_by_digest", cfg.maxHistory)));
}
