// A worker's side of `worker --processes N` (swarm.ts is the supervisor's):
// tell the supervisor the worker runs and under which identity, clear the
// heartbeat of the dead child this one replaces (else Sidekiq::ProcessSet and
// the Web UI list N + 1 processes until it expires, 60 s), and stop when the
// supervisor is gone rather than run unsupervised. And one stop signalled
// twice at once is one stop: systemd's default KillMode=control-group sends
// TERM to every process of the service while the supervisor forwards its own;
// nor is a supervisor lost during a stop a second TERM: the stop goes on as
// asked. As the stop ends, the exit code goes to the supervisor before the
// exit (swarm.ts trusts it over how the runtime reports the exit).
import { type RedisSource, connectRedis } from "../../core/redis/connection.js";
import type { Logger } from "../../core/logging/logger.js";
import { PROCESSES_KEY, workKey } from "../../core/wire/keys.js";
import { EXIT_MESSAGE, READY_MESSAGE, SWARM_INDEX_ENV, SWARM_REPLACES_ENV } from "./swarm.js";

export interface SwarmChild {
  /** 0-based slot in the swarm. */
  index: number;
  /** The identity of the dead child this one replaces. */
  replaces: string | undefined;
  /** The TERM / INT this process got (swarmSignalExit marks them, joinSwarm reads them). */
  stops: StopSignals;
}

/** This process's place in a swarm, or undefined when it runs on its own. */
export function swarmChild(env: NodeJS.ProcessEnv = process.env): SwarmChild | undefined {
  const raw = env[SWARM_INDEX_ENV];
  if (raw === undefined || !/^\d+$/.test(raw) || typeof process.send !== "function") return undefined;
  return { index: Number(raw), replaces: env[SWARM_REPLACES_ENV] || undefined, stops: new StopSignals() };
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
      .srem(PROCESSES_KEY, identity)
      .unlink(identity, workKey(identity), workKey(identity, "workers"))
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
  // A supervisor killed outright closes the channel: stop as on TERM, unless a
  // stop is under way (a second TERM would cut it short). It may have closed
  // while this worker started, before anyone listened; sending on it then
  // throws, and the crash would leave the heartbeat registered for 60 s.
  const stop = () => {
    if (!child.stops.asked) process.kill(process.pid, "SIGTERM");
  };
  if (!process.connected) {
    if (!child.stops.asked) logger.warn("The supervisor is gone: stopping, as on TERM");
    return stop();
  }
  process.once("disconnect", stop);
  process.send?.({ type: READY_MESSAGE, identity }, undefined, {}, () => {});
}

/** Two TERM / INT this close together are one stop, sent twice (not a second "exit now"). */
export const DUPLICATE_STOP_MS = 1000;

/** Tells a stop signalled twice at once from a second stop (pure: unit-tested). */
export class StopSignals {
  private firstAt: number | undefined;
  /** Whether a TERM or INT has arrived: a stop is under way. */
  get asked(): boolean {
    return this.firstAt !== undefined;
  }
  /** A TERM or INT arrived. */
  signalled(now: number): void {
    this.firstAt ??= now;
  }
  /** Whether an "exit now" (128 + n) should be ignored as the same stop. */
  duplicate(code: number, now: number): boolean {
    return code >= 128 && this.firstAt !== undefined && now - this.firstAt < DUPLICATE_STOP_MS;
  }
}

/** Sends the exit code to the supervisor, then exits with it (at once when the channel is gone). */
export function reportExit(code: number, exit: (code: number) => void): void {
  if (!process.connected || !process.send) return exit(code);
  try {
    process.send({ type: EXIT_MESSAGE, code }, undefined, {}, () => exit(code));
  } catch {
    exit(code);
  }
}

/**
 * The `exit` for Worker#handleSignals in a swarm child. Call it before
 * handleSignals, so its listeners see each signal first.
 */
export function swarmSignalExit(
  child: SwarmChild,
  logger: Logger,
  exit = (code: number) => process.exit(code),
): (code: number) => void {
  const mark = () => child.stops.signalled(Date.now());
  process.on("SIGTERM", mark);
  process.on("SIGINT", mark);
  return (code) => {
    if (!child.stops.duplicate(code, Date.now())) return reportExit(code, exit);
    logger.info(`The same stop, signalled twice within ${DUPLICATE_STOP_MS} ms: still stopping as the first asked`);
  };
}
