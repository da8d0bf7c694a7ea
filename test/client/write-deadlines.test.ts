// A push's write deadline: one timer for a connection's writes in flight, not
// one a write. The queue's logic runs on a fake clock; the real timer is
// checked for what it does to the process (held only while a write waits).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { boundedWrite, NoReplyError, WriteDeadlines } from "../../src/core/client/bounded-write.js";
import { PushUncertainError } from "../../src/core/client/errors.js";
import { pushOnNextTick } from "../../src/core/client/push-batch.js";
import { FakeClock } from "../support/fake-clock.js";

function setup(ms = 1000) {
  const clock = new FakeClock();
  const deadlines = new WriteDeadlines(ms, clock);
  const timedOut: string[] = [];
  const send = (name: string) => deadlines.add(() => timedOut.push(name));
  return { clock, deadlines, timedOut, send };
}

describe("a connection's write deadlines", () => {
  it("times out the overdue head at its deadline, and not the writes sent after it", () => {
    const { clock, deadlines, timedOut, send } = setup();
    send("a");
    clock.advanceTo(300);
    send("b");
    clock.advanceTo(999);
    expect(timedOut).toEqual([]);
    clock.advanceTo(1000);
    expect(timedOut).toEqual(["a"]);
    clock.advanceTo(1299);
    expect(timedOut).toEqual(["a"]);
    clock.advanceTo(1300);
    expect(timedOut).toEqual(["a", "b"]);
    expect(deadlines.size).toBe(0);
    expect(clock.armed).toBe(0);
  });

  it("a write settled before its deadline never times out, settled in or out of order", () => {
    const { clock, deadlines, timedOut, send } = setup();
    const a = send("a");
    clock.advanceTo(100);
    const b = send("b");
    clock.advanceTo(200);
    const c = send("c");
    // b answers before a: it stays queued behind a, but will not time out.
    deadlines.settle(b);
    expect(deadlines.size).toBe(3);
    deadlines.settle(a);
    expect(deadlines.size).toBe(1);
    clock.advanceTo(1199);
    expect(timedOut).toEqual([]);
    clock.advanceTo(1200);
    expect(timedOut).toEqual(["c"]);
    // A settle after the timeout changes nothing.
    deadlines.settle(c);
    expect(timedOut).toEqual(["c"]);
    expect(deadlines.size).toBe(0);
  });

  it("an unsettled head behind which later writes settled: only the head times out", () => {
    const { clock, deadlines, timedOut, send } = setup();
    send("a");
    clock.advanceTo(10);
    const later = [send("b"), send("c")];
    for (const w of later) deadlines.settle(w);
    clock.advanceTo(5000);
    expect(timedOut).toEqual(["a"]);
    expect(deadlines.size).toBe(0);
  });

  it("one timer for many writes: one in flight at a time, or many at once", () => {
    const { clock, deadlines, timedOut, send } = setup();
    for (let i = 0; i < 500; i++) {
      const w = send(`one-${i}`);
      clock.advanceTo(clock.t + 1);
      deadlines.settle(w);
    }
    const many = Array.from({ length: 500 }, (_, i) => send(`many-${i}`));
    for (const w of many) deadlines.settle(w);
    expect(clock.arms).toBe(1);
    expect(timedOut).toEqual([]);
  });

  it("re-arms for the next head when the timer finds it not yet due", () => {
    const { clock, deadlines, timedOut, send } = setup();
    deadlines.settle(send("a"));
    clock.advanceTo(600);
    send("b");
    // The timer armed for a fires at 1000, finds b due at 1600, waits out the rest.
    clock.advanceTo(1000);
    expect(clock.arms).toBe(2);
    expect(timedOut).toEqual([]);
    clock.advanceTo(1600);
    expect(timedOut).toEqual(["b"]);
  });

  it("a write sent from a timeout gets its full bound, on the one timer", () => {
    const { clock, deadlines, timedOut } = setup();
    deadlines.add(() => {
      timedOut.push("a");
      deadlines.add(() => timedOut.push("b"));
    });
    clock.advanceTo(1000);
    expect(timedOut).toEqual(["a"]);
    expect(clock.armed).toBe(1);
    clock.advanceTo(1999);
    expect(timedOut).toEqual(["a"]);
    clock.advanceTo(2000);
    expect(timedOut).toEqual(["a", "b"]);
  });

  it("with nothing in flight the timer holds nothing, and once it fires none is left", () => {
    const { clock, deadlines, send } = setup();
    const w = send("a");
    expect(clock.held).toBe(1);
    deadlines.settle(w);
    expect(clock.held).toBe(0);
    // A write sent before the idle timer fires holds it again.
    const v = send("b");
    expect(clock.held).toBe(1);
    deadlines.settle(v);
    clock.advanceTo(5000);
    expect(clock.armed).toBe(0);
    expect(clock.arms).toBe(1);
  });

  it("bound(): the write's own outcome while it beats the deadline, a NoReplyError once the deadline wins", async () => {
    const { clock, deadlines } = setup();
    await expect(deadlines.bound(Promise.resolve("OK"))).resolves.toBe("OK");
    await expect(deadlines.bound(Promise.reject(new Error("ERR refused")))).rejects.toThrow("ERR refused");
    const never = deadlines.bound(new Promise(() => undefined));
    clock.advanceTo(1000);
    await expect(never).rejects.toThrow(new NoReplyError(1000));
    expect(deadlines.size).toBe(0);
  });

  it("boundedWrite: a write with no reply within the bound is a PushUncertainError naming its job", async () => {
    const { clock, deadlines } = setup(2000);
    const redis = { options: { host: "redis.test", port: 6380 } } as unknown as Redis;
    const push = boundedWrite(redis, ["jid-1"], deadlines, () => new Promise(() => undefined));
    clock.advanceTo(2000);
    const e = await push.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(PushUncertainError);
    expect((e as PushUncertainError).message).toMatch(/redis\.test:6380 \(no reply within 2000 ms\).*job jid-1/);
    expect((e as PushUncertainError).uncertain).toEqual(["jid-1"]);
  });

  it("a tick's batch of single pushes shares one deadline: each push rejects at it, and the batch leaves the queue once its write settles", async () => {
    const { clock, deadlines } = setup(2000);
    let reply!: (r: Array<[null, number]>) => void;
    const exec = new Promise<Array<[null, number]>>((ok) => (reply = ok));
    const pipe = { sadd: () => pipe, lpush: () => pipe, exec: () => exec };
    const redis = { pipeline: () => pipe } as unknown as Redis;
    const pushes = ["a", "b"].map((json) => pushOnNextTick(redis, deadlines, "default", () => json));
    expect(deadlines.size).toBe(1);
    const turn = () => new Promise((next) => setImmediate(next));
    let settled = 0;
    for (const p of pushes) p.catch(() => settled++);
    await turn();
    clock.advanceTo(1999);
    await turn();
    expect(settled).toBe(0);
    clock.advanceTo(2000);
    for (const p of pushes) await expect(p).rejects.toThrow(new NoReplyError(2000));
    expect(deadlines.size).toBe(0);
    // A batch whose reply comes in time: its pushes resolve and nothing stays queued.
    const next = pushOnNextTick(redis, deadlines, "default", () => "c");
    expect(deadlines.size).toBe(1);
    reply([
      [null, 1],
      [null, 3],
    ]);
    await expect(next).resolves.toBeUndefined();
    expect(deadlines.size).toBe(0);
  });

  it("on the real clock, the timer keeps the process alive only while a write is in flight", async () => {
    // The timer itself is asked (hasRef): process.getActiveResourcesInfo() lists no timers on Bun.
    const deadlines = new WriteDeadlines(60_000);
    const timer = () => (deadlines as unknown as { timer: NodeJS.Timeout | undefined }).timer;
    expect(timer()).toBeUndefined();
    let reply!: (v: string) => void;
    const write = deadlines.bound(new Promise<string>((ok) => (reply = ok)));
    expect(timer()?.hasRef()).toBe(true);
    reply("OK");
    await expect(write).resolves.toBe("OK");
    expect(timer()?.hasRef()).toBe(false);
    clearTimeout(timer());
  });
});
