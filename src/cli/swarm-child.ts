// A worker's side of `worker --processes N` (swarm.ts is the supervisor's):
// tell the supervisor the worker runs and under which identity, clear the
// heartbeat of the dead child this one replaces (else Sidekiq::ProcessSet and
// the Web UI list N + 1 processes until it expires, 60 s), and stop when the
// supervisor is gone rather than run unsupervised.
import { type RedisSource, connectRedis } from "../redis/connection.js";
import type { Logger } from "../server/logger.js";
import { READY_MESSAGE, SWARM_INDEX_ENV, SWARM_REPLACES_ENV } from "./swarm.js";

export interface SwarmChild {
  /** 0-based slot in the swarm. */
  index: number;
  /** The identity of the dead child this one replaces. */
  replaces: string | undefined;
}

/** This process's place in a swarm, or undefined when it runs on its own. */
export function swarmChild(env: NodeJS.ProcessEnv = process.env): SwarmChild | undefined {
  const raw = env[SWARM_INDEX_ENV];
  if (raw === undefined || !/^\d+$/.test(raw) || typeof process.send !== "function") return undefined;
  return { index: Number(raw), replaces: env[SWARM_REPLACES_ENV] || undefined };
}

/**
 * Removes a dead process's heartbeat as Launcher#clear_heartbeat would have
 * (SREM processes, the process hash and its work keys). Only for an identity
 * the supervisor saw exit.
 */
export async function clearDeadHeartbeat(source: RedisSource, identity: string): Promise<void> {
  const { redis, owned } = connectRedis(source);
  try {
    await redis
      .pipeline()
      .srem("processes", identity)
      .unlink(identity, `${identity}:work`, `${identity}:workers`)
      .exec();
  } finally {
    if (owned) redis.disconnect();
  }
}

/** Called once the worker runs: clears the predecessor, reports ready, watches the supervisor. */
export async function joinSwarm(
  child: SwarmChild,
  identity: string,
  redis: RedisSource,
  logger: Logger,
): Promise<void> {
  if (child.replaces && child.replaces !== identity) {
    try {
      await clearDeadHeartbeat(redis, child.replaces);
      logger.info(`Replaces worker process ${child.replaces}`);
    } catch (e) {
      logger.warn(`could not clear the heartbeat of ${child.replaces} (it expires within 60 s)`, {
        error: (e as Error).message,
      });
    }
  }
  // A supervisor killed outright closes the channel: stop as on TERM.
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"));
  process.send?.({ type: READY_MESSAGE, identity });
}
