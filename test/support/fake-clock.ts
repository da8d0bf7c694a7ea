// A clock and timers for logic that keeps its own timer (the silence
// watchdog, a connection's write deadlines): time moves only when a test
// says, and each timer fires at its own time on the way.

interface FakeTimer {
  at: number;
  fire: () => void;
  /** Whether it would keep the process alive. */
  held: boolean;
}

export class FakeClock {
  t = 0;
  /** Timers armed so far. */
  arms = 0;
  private readonly timers = new Set<FakeTimer>();
  now = () => this.t;
  arm(fire: () => void, ms: number): unknown {
    this.arms++;
    const timer = { at: this.t + ms, fire, held: true };
    this.timers.add(timer);
    return timer;
  }
  disarm(timer: unknown): void {
    this.timers.delete(timer as FakeTimer);
  }
  hold(timer: unknown, yes: boolean): void {
    (timer as FakeTimer).held = yes;
  }
  /** Timers armed and not yet fired. */
  get armed(): number {
    return this.timers.size;
  }
  /** Timers that would keep the process alive. */
  get held(): number {
    return [...this.timers].filter((x) => x.held).length;
  }
  /** Moves to `to`, firing each timer due on the way at its own time. */
  advanceTo(to: number): void {
    for (;;) {
      const due = [...this.timers].filter((x) => x.at <= to).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers.delete(due);
      this.t = due.at;
      due.fire();
    }
    this.t = to;
  }
}
