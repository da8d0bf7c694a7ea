// One watchdog per connection bounds its silence. ioredis's own socketTimeout
// arms a timer and a 'data' listener for each command written while none is
// armed, and clears both at its reply: with one command in flight at a time
// (a worker at concurrency 1, a loop of single pushes) that is a timer and a
// listener per command. The watchdog instead notes the time when a command
// starts a wait and when a byte arrives, and keeps one timer that, when it
// fires, either finds the silence long enough or waits out the rest: a timer
// per bound's worth of time, not per command. The bound is the same: a
// connection is dropped once `ms` pass with a command waiting and no byte.

/** The clock and timers a watchdog runs on (a test's are fake). */
export interface WatchdogClock {
  /** Monotonic milliseconds: a wall clock set forward must not look like silence. */
  now(): number;
  arm(fire: () => void, ms: number): unknown;
  disarm(timer: unknown): void;
}

const realClock: WatchdogClock = {
  now: () => performance.now(),
  arm: (fire, ms) => setTimeout(fire, ms),
  disarm: (timer) => clearTimeout(timer as NodeJS.Timeout),
};

export class SilenceWatchdog {
  /** When the current wait (a command sent on an idle connection, or the last byte) began. */
  private since = 0;
  private timer: unknown = undefined;
  private readonly fire = () => this.check();

  /**
   * @param ms the bound on silence while a command waits
   * @param waiting how many commands have been written and not answered
   * @param drop called once the bound is reached (the owner destroys the socket)
   */
  constructor(
    readonly ms: number,
    private readonly waiting: () => number,
    private readonly drop: () => void,
    private readonly clock: WatchdogClock = realClock,
  ) {}

  /** A command was written (it is already counted in `waiting`). */
  sent(): void {
    // The first command on an idle connection starts the wait; one sent
    // behind others does not move it (their reply, or its first byte, does).
    if (this.timer === undefined) {
      this.since = this.clock.now();
      this.timer = this.clock.arm(this.fire, this.ms);
    } else if (this.waiting() === 1) this.since = this.clock.now();
  }

  /** Bytes arrived: the connection is alive, whatever they answer. */
  heard(): void {
    this.since = this.clock.now();
  }

  /** The socket closed: its wait ends with it, and no timer may reach the next socket. */
  stop(): void {
    if (this.timer !== undefined) this.clock.disarm(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    this.timer = undefined;
    // Idle: nothing to bound until the next command.
    if (this.waiting() === 0) return;
    const left = this.since + this.ms - this.clock.now();
    if (left > 0) this.timer = this.clock.arm(this.fire, left);
    else this.drop();
  }
}
