// A push's write, bounded. The connection notices a silent socket within its
// network timeout and ioredis sends the command again on a new connection
// (Sidekiq's client does the same: one retry, at-least-once). Where no new
// connection comes, the push must not wait on: after twice the timeout it
// rejects, saying the job may have been written.
import type { Redis } from "ioredis";
import {
  describeRedis,
  explain,
  isClosedByAcl,
  isConnectionError,
  lastErrorOf,
  reasonOf,
} from "../redis/availability.js";
import { realTimerClock, type TimerClock } from "../redis/network.js";
import { PushUncertainError } from "./errors.js";

/** How long a push's write may wait for its reply: the timeout to notice the loss, and one more for the resend. */
export function writeBoundMs(networkTimeoutMs: number): number {
  return 2 * networkTimeoutMs;
}

/**
 * Runs `write` (the commands that push `jids`) within the bound of
 * `deadlines`; its failure becomes writeFailure's error.
 */
export async function boundedWrite(
  redis: Redis,
  jids: readonly string[],
  deadlines: WriteDeadlines,
  write: () => Promise<unknown>,
) {
  try {
    await deadlines.bound(write());
  } catch (e) {
    throw writeFailure(redis, jids, e);
  }
}

/**
 * Why the push of `jids` failed: a connection failure or no reply within the
 * bound is a PushUncertainError naming them; any other error (a refusal at
 * maxmemory, a reply error) passes through explained.
 */
export function writeFailure(redis: Redis, jids: readonly string[], e: unknown): unknown {
  if (e instanceof NoReplyError || (isConnectionError(e) && !isClosedByAcl(redis))) return uncertain(redis, jids, e);
  // A reply error, or a connection its user's ACL closed (a refused SELECT: nothing was written).
  return explain(redis, e);
}

/** A write whose bound passed before its reply came (the write may still land). */
export class NoReplyError extends Error {
  constructor(ms: number) {
    super(`no reply within ${ms} ms`);
    this.name = "NoReplyError";
  }
}

// One deadline timer for a connection's writes, not one a write. A shard's
// writes all have the same bound, so their deadlines come in the order they
// were sent: a FIFO of writes in flight, whose head's deadline is the next to
// come. Replies on one connection come in order, so a settled write is nearly
// always the head, popped at once: the queue holds what is in flight. The
// timer is armed for the head and not moved as writes come and go; when it
// fires it times out every overdue head and waits out the rest of the next
// head's. With one write in flight at a time (a loop of single pushes) that
// is a timer a bound's worth of time, not a setTimeout and clearTimeout a push.

/** A write in flight: its deadline, and how to end its wait (dropped once it settles). */
export interface PendingWrite {
  at: number;
  timeOut: (() => void) | undefined;
}

export class WriteDeadlines {
  /** Writes in flight in the order sent; settled ones are popped off the head. */
  private readonly queue: PendingWrite[] = [];
  private head = 0;
  private timer: unknown = undefined;
  private held = false;
  private readonly fire = () => this.check();

  /** @param ms how long a write may wait for its reply (writeBoundMs) */
  constructor(
    readonly ms: number,
    private readonly clock: TimerClock = realTimerClock,
  ) {}

  /** Writes in flight (settled writes behind an unsettled one included). */
  get size(): number {
    return this.queue.length - this.head;
  }

  /** `p`, or a NoReplyError once the bound passes first; `p` is left to settle on its own. */
  bound<T>(p: Promise<T>): Promise<T> {
    if (this.ms <= 0) {
      p.catch(() => undefined);
      return Promise.reject(new NoReplyError(this.ms));
    }
    return new Promise((resolve, reject) => {
      const w = this.add(() => reject(new NoReplyError(this.ms)));
      p.then(
        (v) => {
          this.settle(w);
          resolve(v);
        },
        (e: unknown) => {
          this.settle(w);
          reject(e);
        },
      );
    });
  }

  /** Starts a write's wait; `timeOut` is called once its deadline passes unsettled. */
  add(timeOut: () => void): PendingWrite {
    const w: PendingWrite = { at: this.clock.now() + this.ms, timeOut };
    this.queue.push(w);
    // A timer already armed fires no later than this deadline (it was armed
    // for an earlier one); it only needs to keep the process alive again.
    if (this.timer === undefined) {
      this.timer = this.clock.arm(this.fire, this.ms);
      this.held = true;
    } else if (!this.held) this.hold(true);
    return w;
  }

  /** The write settled (or timed out): nothing of it is kept, and settled heads leave the queue. */
  settle(w: PendingWrite): void {
    w.timeOut = undefined;
    const q = this.queue;
    while (this.head < q.length && q[this.head]!.timeOut === undefined) this.head++;
    if (this.head === q.length) {
      q.length = this.head = 0;
      // Nothing in flight: the timer may stay armed, but must not keep the process alive.
      if (this.held) this.hold(false);
    } else if (this.head > 64 && this.head * 2 > q.length) {
      q.splice(0, this.head);
      this.head = 0;
    }
  }

  private hold(yes: boolean): void {
    this.held = yes;
    this.clock.hold(this.timer, yes);
  }

  private check(): void {
    this.timer = undefined;
    this.held = false;
    const now = this.clock.now();
    const overdue: Array<() => void> = [];
    let next: PendingWrite | undefined;
    while ((next = this.queue[this.head]) !== undefined && (next.timeOut === undefined || next.at <= now)) {
      if (next.timeOut) overdue.push(next.timeOut);
      this.settle(next);
    }
    if (next !== undefined) {
      this.timer = this.clock.arm(this.fire, next.at - now);
      this.held = true;
    }
    // Called once the queue and its timer are in order: one may send again at once.
    for (const timeOut of overdue) timeOut();
  }
}

function uncertain(redis: Redis, jids: readonly string[], cause: unknown): PushUncertainError {
  const what = jids.length === 1 ? `job ${jids[0]}` : `${jids.length} jobs`;
  return new PushUncertainError(
    `Redis unreachable at ${describeRedis(redis)} (${reasonOf(lastErrorOf(redis) ?? cause)}) after the push of ${what} was sent: ` +
      `it may or may not be written`,
    jids,
    { cause },
  );
}
