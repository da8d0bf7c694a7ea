// What a stop reports, and how long it may spend on Redis after the jobs' timeout.
import type { Redis } from "ioredis";
import { lastErrorOf, reasonOf } from "../redis/availability.js";

/**
 * After the jobs' timeout, the time left for Redis work at shutdown (pushing
 * jobs back, leaving the working-list registry, clearing the heartbeat,
 * closing): past it, the connections are dropped and what was not done is
 * reported. Quiet (TSTP) waits at most this long for Redis too.
 */
export const SHUTDOWN_GRACE_MS = 3000;

/** How a stop went. `clean` is false when something could not be done (Redis unreachable). */
export interface StopResult {
  clean: boolean;
  /** Jobs still running at the timeout, pushed back to their queues. */
  pushedBack: number;
  /**
   * Jobs still running at the timeout that could not be pushed back: with
   * reliable fetch they wait in this process's working lists, and recovery
   * runs them again once the heartbeat has expired; with basic fetch they are lost.
   */
  notPushedBack: number;
  /** What could not be done, one phrase each (empty when clean). */
  problems: string[];
}

/** Why Redis is not answering, in a few words. */
export function silenceReason(redis: Redis): string {
  const last = lastErrorOf(redis);
  if (last) return reasonOf(last);
  return redis.status === "ready" ? "no reply in time" : `connection ${redis.status}`;
}

/** The one error line of a stop that could not do everything. */
export function incompleteStopLine(result: StopResult, why: string, reliable: boolean, answerMayCome: boolean): string {
  const n = result.notPushedBack;
  const left =
    n === 0
      ? []
      : reliable
        ? [
            `${n} unfinished jobs left in the working lists for recovery${answerMayCome ? " (or pushed back, if Redis still runs the request)" : ""}`,
          ]
        : [`${n} unfinished jobs could not be pushed back (basic fetch: they are lost)`];
  return `Stopped without Redis (${why}): ${[...left, ...new Set(result.problems)].join("; ")}`;
}
