// The gem's queue cooldown (cooldown.rb, expirable_set.rb): after
// `threshold` throttled jobs in a row from one queue, the queue rests for
// `period` seconds; a job from it that is not throttled resets the count.

export class Cooldown {
  private readonly inARow = new Map<string, number>();
  /** Queue -> when its rest ends (performance.now() ms). */
  private readonly resting = new Map<string, number>();

  constructor(
    private readonly periodS: number,
    private readonly threshold: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** cooldown.rb#notify_throttled */
  notifyThrottled(queue: string): void {
    const n = (this.inARow.get(queue) ?? 0) + 1;
    this.inARow.set(queue, n);
    if (this.threshold <= n) {
      const now = this.now();
      // expirable_set.rb#add drops the expired entries first.
      for (const [q, until] of this.resting) if (until <= now) this.resting.delete(q);
      this.resting.set(queue, now + this.periodS * 1000);
    }
  }

  /** cooldown.rb#notify_admitted */
  notifyAdmitted(queue: string): void {
    this.inARow.delete(queue);
  }

  /** Whether the queue rests now (the gem leaves it out of its fetch). */
  isResting(queue: string): boolean {
    const until = this.resting.get(queue);
    return until !== undefined && until > this.now();
  }
}
