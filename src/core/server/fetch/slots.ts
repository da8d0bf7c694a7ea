// A capsule's slots, shared by its fetch lanes. The invariant they keep: the
// jobs running, the jobs the lanes' fetches in flight have reserved, and the
// jobs fetched ahead never exceed the capsule's concurrency, so together the
// lanes never fetch more jobs than free slots. And the pause after throttled
// hand-backs, which ends as soon as a job runs.

export class Slots {
  private busy = 0;
  private reserved = 0;
  private backoffMs = 0;
  /** Ends the fetch loops' backoff pauses now. */
  private readonly backoffEnds = new Set<() => void>();

  constructor(readonly concurrency: number) {}

  /** Slots running a job. */
  get running(): number {
    return this.busy;
  }

  /** Slots neither running, nor reserved by a fetch in flight, nor held by the `ahead` jobs fetched ahead. */
  free(ahead: number): number {
    return this.concurrency - this.busy - this.reserved - ahead;
  }

  /** A fetch asks for `n` jobs: their slots are its until it ends (unreserve). */
  reserve(n: number): void {
    this.reserved += n;
  }

  unreserve(n: number): void {
    this.reserved -= n;
  }

  /** Whether a fetched job can start now (else it waits as a job fetched ahead). */
  get open(): boolean {
    return this.busy < this.concurrency;
  }

  /** A job starts in a slot. */
  take(): void {
    this.busy++;
  }

  /** A job's slot is free again. */
  release(): void {
    this.busy--;
  }

  /** A job was handed back (a throttle refused it): the fetches pause, twice as long each time, 100 ms to 5 s. */
  handedBack(): void {
    this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 100), 5000);
  }

  /** A job ran: the pause ends, now. */
  ran(): void {
    if (this.backoffMs === 0) return;
    this.backoffMs = 0;
    for (const end of [...this.backoffEnds]) end();
  }

  get backingOff(): boolean {
    return this.backoffMs > 0;
  }

  /**
   * The hand-back pause, ended as soon as a job runs (ran): a batch's
   * throttled hand-backs double it once each, and without the early end the
   * pause outlasted the jobs holding the throttle's slots.
   */
  pause(): Promise<void> {
    const ends = this.backoffEnds;
    return new Promise((resolve) => {
      const end = () => {
        clearTimeout(timer);
        ends.delete(end);
        resolve();
      };
      const timer = setTimeout(end, this.backoffMs);
      ends.add(end);
    });
  }
}
