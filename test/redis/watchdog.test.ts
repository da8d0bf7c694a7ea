// The silence watchdog: one per connection, dropping it once its bound passes
// with a command waiting and no byte, as ioredis's timer per command did. Its
// logic runs here on a fake clock; on a real socket, through a fault proxy.
import { afterEach, describe, expect, it } from "vitest";
import { startFaultProxy, type FaultProxy } from "../../harness/fault-proxy.js";
import { connectRedis } from "../../src/core/redis/connection.js";
import { SilenceWatchdog } from "../../src/core/redis/network.js";
import { FakeClock } from "../support/fake-clock.js";
import { useRedis } from "../support/use-redis.js";

function setup(ms = 1000) {
  const clock = new FakeClock();
  const state = { waiting: 0, drops: 0 };
  const dog = new SilenceWatchdog(
    ms,
    () => state.waiting,
    () => state.drops++,
    clock,
  );
  const send = () => {
    state.waiting++;
    dog.sent();
  };
  const reply = () => {
    dog.heard();
    state.waiting--;
  };
  return { clock, state, dog, send, reply };
}

describe("the silence watchdog", () => {
  it("drops a connection whose command waits the bound without a byte, not a moment before", () => {
    const { clock, state, send } = setup();
    clock.advanceTo(500);
    send();
    clock.advanceTo(1499);
    expect(state.drops).toBe(0);
    clock.advanceTo(1500);
    expect(state.drops).toBe(1);
  });

  it("counts the silence from the last byte, as a reply streaming in or a pipeline answered in parts", () => {
    const { clock, state, dog, send } = setup();
    send();
    send();
    clock.advanceTo(900);
    dog.heard();
    clock.advanceTo(1899);
    expect(state.drops).toBe(0);
    clock.advanceTo(1900);
    expect(state.drops).toBe(1);
  });

  it("a command sent behind a waiting one does not move the wait", () => {
    const { clock, state, send } = setup();
    send();
    clock.advanceTo(600);
    send();
    clock.advanceTo(1000);
    expect(state.drops).toBe(1);
  });

  it("a command sent on an idle connection starts its own wait, though an old timer is still armed", () => {
    const { clock, state, send, reply } = setup();
    send();
    clock.advanceTo(100);
    reply();
    clock.advanceTo(800);
    send();
    // The timer armed at 0 fires at 1000 and finds the wait begun at 800.
    clock.advanceTo(1799);
    expect(state.drops).toBe(0);
    clock.advanceTo(1800);
    expect(state.drops).toBe(1);
  });

  it("an idle connection is never dropped, and its timer lapses until the next command", () => {
    const { clock, state, send, reply } = setup();
    send();
    reply();
    clock.advanceTo(60_000);
    expect([state.drops, clock.armed]).toEqual([0, 0]);
    send();
    expect(clock.armed).toBe(1);
    clock.advanceTo(61_000);
    expect(state.drops).toBe(1);
  });

  it("one timer per bound's worth of time, not one per command", () => {
    const { clock, state, send, reply } = setup();
    // 10,000 commands one at a time over 5 s: each answered 0.5 ms after it is sent.
    for (let i = 0; i < 10_000; i++) {
      send();
      clock.advanceTo(clock.t + 0.25);
      reply();
      clock.advanceTo(clock.t + 0.25);
    }
    expect(state.drops).toBe(0);
    expect(clock.arms).toBeLessThanOrEqual(6);
  });

  it("stops with its socket: no timer is left to drop the next one", () => {
    const { clock, state, dog, send } = setup();
    send();
    clock.advanceTo(500);
    dog.stop();
    expect(clock.armed).toBe(0);
    clock.advanceTo(5000);
    expect(state.drops).toBe(0);
  });
});

describe("the silence watchdog on a connection", () => {
  const t = useRedis();
  let proxy: FaultProxy | undefined;
  afterEach(() => proxy?.close());

  it("replaces ioredis's timer per command and drops a blackholed socket with ioredis's error", async () => {
    proxy = await startFaultProxy(t.server.port);
    const { redis } = connectRedis({ url: proxy.url, networkTimeoutMs: 300 });
    try {
      expect(await redis.ping()).toBe("PONG");
      // ioredis's own timer was never armed: the watchdog took its place.
      expect((redis as unknown as { socketTimeoutTimer?: unknown }).socketTimeoutTimer).toBeUndefined();
      const dropped = new Promise<Error>((resolve) => redis.once("error", resolve));
      proxy.blackhole();
      redis.ping().catch(() => undefined);
      expect((await dropped).message).toBe("Socket timeout. Expecting data, but didn't receive any in 300ms.");
    } finally {
      redis.disconnect();
    }
  });
});
