// Fetch-ahead (reliable fetch only, the worker's `fetchAhead`): while the
// last fetch found all it asked for and jobs are short, a lane fetches a
// whole batch while every slot is still busy, so no slot waits a round trip.
// The batch waits here (and in the working hash, where recovery finds it
// after a crash), each job starting as a slot frees. Quiet, or a job still
// waiting after AHEAD_MAX_WAIT_MS (every slot held by long jobs), puts them
// back at the head of their queues for another process.
import { isConnectionError } from "../../redis/availability.js";
import type { Fetcher, UnitOfWork } from "./fetch.js";
import type { Logger } from "../../logging/logger.js";

/**
 * Fetch ahead only while jobs take less than this on average (ms): then a
 * fetch's round trip is a large part of a batch's time, and a job fetched
 * ahead waits for a slot only a few ms. Longer jobs fetch for free slots only.
 */
export const AHEAD_MAX_JOB_MS = 5;
/** A job fetched ahead still waiting after this (ms) goes back to its queue, for an idle process to take. */
export const AHEAD_MAX_WAIT_MS = 1000;

/** A job fetched ahead, waiting for a slot. */
export interface Waiting {
  uow: UnitOfWork;
  fetcher: Fetcher;
  since: number;
}

/** What fetch-ahead needs of its manager. */
export interface FetchAheadHost {
  /** Still fetching (not quiet, not stopped). */
  running(): boolean;
  /** Wakes the fetch loops waiting for room: jobs went back. */
  wake(): void;
  logger: Logger;
}

export class FetchAhead {
  /** Jobs fetched ahead, oldest first: each starts when a slot frees. */
  readonly waiting: Waiting[] = [];
  /** How many jobs fetched ahead may wait for a slot: a batch per lane (0: never fetch ahead). */
  limit = 0;
  /** The last fetch found as many jobs as it asked for: the queues have a backlog. */
  private backlog = false;
  /** Moving average of a job's time in the processor (ms); Infinity before the first. */
  private jobMs = Infinity;
  private timer?: NodeJS.Timeout | undefined;
  /** Fetched-ahead jobs going back to their queues (quiet, or waited too long). */
  private returning?: Promise<void> | undefined;

  constructor(private readonly host: FetchAheadHost) {}

  get length(): number {
    return this.waiting.length;
  }

  /** The last fetch asked for `want` and got `got` jobs (undefined: it failed): all of them means a backlog. */
  fetched(want: number, got: number | undefined): void {
    this.backlog = got === want;
  }

  /** How many jobs may wait here beyond the slots: a batch per lane, while jobs are short and the queues have a backlog. */
  room(): number {
    return this.backlog && this.jobMs < AHEAD_MAX_JOB_MS ? this.limit : 0;
  }

  /** A job spent `ms` in the processor. */
  timed(ms: number): void {
    this.jobMs = this.jobMs === Infinity ? ms : this.jobMs * 0.9 + ms * 0.1;
  }

  /** Keeps a job fetched ahead until a slot frees (next) or it has waited too long. */
  wait(uow: UnitOfWork, fetcher: Fetcher): void {
    this.waiting.push({ uow, fetcher, since: performance.now() });
    if (!this.timer) this.arm(AHEAD_MAX_WAIT_MS);
  }

  /** The job that has waited longest, for a slot that just freed. */
  next(): Waiting | undefined {
    return this.waiting.shift();
  }

  /** Quiet: every waiting job goes back to its queue. Resolves once they are back (or Redis refused them). */
  quiet(): Promise<void> {
    if (this.waiting.length > 0) this.returning = this.requeueWaiting();
    return this.returning ?? Promise.resolve();
  }

  /** A stop that could not put them back (Redis unreachable): forgets them, for recovery to return. How many. */
  drop(): number {
    return this.waiting.splice(0).length;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const oldest = this.waiting[0];
      if (!oldest || !this.host.running()) return;
      const waited = performance.now() - oldest.since;
      // Every slot is held by a long job: let an idle process run the rest,
      // and fetch only for free slots again until one frees.
      if (waited >= AHEAD_MAX_WAIT_MS) {
        this.backlog = false;
        this.returning = this.requeueWaiting();
      } else this.arm(AHEAD_MAX_WAIT_MS - waited);
    }, ms);
    this.timer.unref();
  }

  /**
   * Puts every job still waiting for a slot back at the head of its queue,
   * in order. If Redis cannot take them they wait here again (and still in
   * the working hash, so a crash loses none).
   */
  private async requeueWaiting(): Promise<void> {
    const waiting = this.waiting.splice(0);
    for (const f of new Set(waiting.map((w) => w.fetcher))) {
      const mine = waiting.filter((w) => w.fetcher === f);
      try {
        await f.bulkRequeue(mine.map((w) => w.uow));
      } catch (e) {
        this.waiting.unshift(...mine);
        if (this.host.running() && !this.timer) this.arm(AHEAD_MAX_WAIT_MS);
        if (!isConnectionError(e))
          this.host.logger.warn("could not return jobs fetched ahead to their queue", { error: (e as Error).message });
      }
    }
    this.host.wake();
  }
}
