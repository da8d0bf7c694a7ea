// A capsule's slots, shared by its fetch lanes: how many run, how many the
// lanes' fetches in flight have reserved (so together they never fetch more
// jobs than free slots), and the pause after throttled hand-backs.

export interface Slots {
  busy: number;
  reserved: number;
  backoffMs: number;
  /** Ends the fetch loops' backoff pauses now. */
  backoffEnds: Set<() => void>;
}

export function newSlots(): Slots {
  return { busy: 0, reserved: 0, backoffMs: 0, backoffEnds: new Set() };
}

/**
 * The hand-back pause, ended as soon as a job runs (the backoff is then 0):
 * a batch's throttled hand-backs double it once each, and without the early
 * end the pause outlasted the jobs holding the throttle's slots.
 */
export function backoffPause(slots: Slots): Promise<void> {
  const ends = slots.backoffEnds;
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      ends.delete(end);
      resolve();
    };
    const timer = setTimeout(end, slots.backoffMs);
    ends.add(end);
  });
}
