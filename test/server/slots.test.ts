// A capsule's slots: what runs, what fetches in flight reserved and what was
// fetched ahead never exceed its concurrency; the hand-back pause doubles up
// to 5 s and ends as soon as a job runs.
import { afterEach, describe, expect, it, vi } from "vitest";
import { Slots } from "../../src/core/server/fetch/slots.js";

describe("Slots", () => {
  afterEach(() => vi.useRealTimers());

  it("counts free slots past those running, reserved and held by jobs fetched ahead", () => {
    const s = new Slots(5);
    s.take();
    s.reserve(2);
    expect(s.free(1)).toBe(1);
    expect(s.open).toBe(true);
    s.unreserve(2);
    for (let i = 0; i < 4; i++) s.take();
    expect([s.running, s.free(0), s.open]).toEqual([5, 0, false]);
    s.release();
    expect([s.running, s.open]).toEqual([4, true]);
  });

  it("pauses after hand-backs, 100 ms doubling to 5 s, and a job that runs ends the pause at once", async () => {
    vi.useFakeTimers();
    const s = new Slots(2);
    expect(s.backingOff).toBe(false);
    for (let i = 0; i < 10; i++) s.handedBack();
    expect(s.backingOff).toBe(true);
    let ended = false;
    const paused = s.pause().then(() => (ended = true));
    await vi.advanceTimersByTimeAsync(4999);
    expect(ended).toBe(false);
    s.ran();
    await paused;
    expect([ended, s.backingOff]).toEqual([true, false]);
  });
});
