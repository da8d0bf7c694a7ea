// Unit tests of JobRetry's per-release rules (job_retry.rb of 6.x, 7.x, 8.x),
// with a fake Redis that records the commands it is sent.
import { describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import {
  handleFailure,
  interpretRetryIn,
  maxAttemptsFor,
  retryDelay,
  retryForExpired,
  retryJitter,
  sendToDead,
  type RetryConfig,
} from "../../src/core/server/job-retry.js";
import type { HandlerOptions } from "../../src/core/server/types.js";
import { decodeBacktrace, JobRecord, profileForVersion, RubyFloat } from "../../src/core/wire/index.js";

const P6 = profileForVersion("6.4.1");
const P7 = profileForVersion("7.3.2");
const P8 = profileForVersion("8.1.7");

type Cmd = [string, ...string[]];

/** Records commands; MULTI blocks are recorded as ["multi"], ..., ["exec"]. */
function fakeRedis(): { redis: Redis; cmds: Cmd[] } {
  const cmds: Cmd[] = [];
  const rec =
    (name: string) =>
    (...a: unknown[]) => {
      cmds.push([name, ...a.map(String)]);
      return Promise.resolve(1);
    };
  const redis = {
    zadd: rec("zadd"),
    multi() {
      cmds.push(["multi"]);
      const tx = {
        zadd: (...a: unknown[]) => (cmds.push(["zadd", ...a.map(String)]), tx),
        zremrangebyscore: (...a: unknown[]) => (cmds.push(["zremrangebyscore", ...a.map(String)]), tx),
        zremrangebyrank: (...a: unknown[]) => (cmds.push(["zremrangebyrank", ...a.map(String)]), tx),
        exec: () => (
          cmds.push(["exec"]),
          Promise.resolve([
            [null, 1],
            [null, 0],
            [null, 0],
          ])
        ),
      };
      return tx;
    },
  } as unknown as Redis;
  return { redis, cmds };
}

const NOW = 1_795_305_964_965.581; // epoch ms with a sub-ms part
const job = (extra: Record<string, unknown> = {}) =>
  JobRecord.parse(
    JSON.stringify({
      retry: true,
      queue: "default",
      class: "NodeJob",
      args: [1],
      jid: "0123456789abcdef01234567",
      created_at: 1,
      ...extra,
    }),
  );
const cfg = (profile = P7, extra: Partial<RetryConfig> = {}): RetryConfig => ({
  profile,
  random: () => 0,
  onHandlerError: () => {},
  ...extra,
});

describe("retryDelay / retryJitter bounds per dialect", () => {
  const lo = () => 0;
  const hi = () => 0.999999999;
  it("6.2.2-7.x: count**4 + 15 + rand(10)*(count+1)", () => {
    for (const p of [P6, P7]) {
      for (const c of [0, 1, 2, 5, 24]) {
        expect(retryDelay(p, c, lo)).toBe(c ** 4 + 15);
        expect(retryDelay(p, c, hi)).toBe(c ** 4 + 15 + 9 * (c + 1));
        // Multiples of count+1 only.
        expect(retryJitter(p, c, () => 0.55) % (c + 1)).toBe(0);
      }
    }
  });
  it("8.x: count**4 + 15 + rand(10*(count+1)), every value in range", () => {
    for (const c of [0, 1, 2, 5, 24]) {
      expect(retryDelay(P8, c, lo)).toBe(c ** 4 + 15);
      expect(retryDelay(P8, c, hi)).toBe(c ** 4 + 15 + 10 * (c + 1) - 1);
    }
    expect(retryJitter(P8, 1, () => 0.55)).toBe(11); // not a multiple of 2
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(retryJitter(P8, 1));
    expect(Math.min(...seen)).toBe(0);
    expect(Math.max(...seen)).toBe(19);
    expect(seen.size).toBe(20);
  });
  it("before 6.2.2: rand(30)*(count+1)", () => {
    expect(retryDelay(profileForVersion("6.2.1"), 1, hi)).toBe(1 + 15 + 29 * 2);
  });
});

describe("maxAttemptsFor", () => {
  it("an Integer retry is the limit; true, a Float or anything else is max_retries (25)", () => {
    expect(maxAttemptsFor(5, {})).toBe(5);
    expect(maxAttemptsFor(0, {})).toBe(0);
    expect(maxAttemptsFor(10n, {})).toBe(10);
    expect(maxAttemptsFor(true, {})).toBe(25);
    expect(maxAttemptsFor(new RubyFloat(5), {})).toBe(25);
    expect(maxAttemptsFor("5", {})).toBe(25);
    expect(maxAttemptsFor(true, { maxRetries: 7 })).toBe(7);
  });
});

describe("interpretRetryIn", () => {
  it("6.4.1 reads the value with to_i: no :discard / :kill, a Float truncates", () => {
    expect(interpretRetryIn(P6, 0, "kill")).toEqual({ kind: "default", delay: 15, custom: false });
    expect(interpretRetryIn(P6, 0, "discard")).toEqual({ kind: "default", delay: 15, custom: false });
    expect(interpretRetryIn(P6, 0, 30.9)).toEqual({ kind: "default", delay: 30, custom: true });
    expect(interpretRetryIn(P6, 1, 0)).toEqual({ kind: "default", delay: 16, custom: false });
    expect(interpretRetryIn(P6, 1, -5)).toEqual({ kind: "default", delay: 16, custom: false });
  });
  it("7.x / 8.x: Integer > 0, :discard, :kill; nil / 0 / negative use the default", () => {
    for (const p of [P7, P8]) {
      expect(interpretRetryIn(p, 2, 100)).toEqual({ kind: "default", delay: 100, custom: true });
      expect(interpretRetryIn(p, 2, 2.7)).toEqual({ kind: "default", delay: 2, custom: true });
      expect(interpretRetryIn(p, 2, 0.5)).toEqual({ kind: "default", delay: 31, custom: false });
      expect(interpretRetryIn(p, 2, null)).toEqual({ kind: "default", delay: 31, custom: false });
      expect(interpretRetryIn(p, 2, "discard")).toEqual({ kind: "discard" });
      expect(interpretRetryIn(p, 2, "kill")).toEqual({ kind: "kill" });
    }
  });
  it("6.5.2-7.0.6 had no to_i: a Float falls back to the default", () => {
    expect(interpretRetryIn(profileForVersion("7.0.6"), 0, 2.5)).toEqual({ kind: "default", delay: 15, custom: false });
    expect(interpretRetryIn(profileForVersion("6.5.2"), 0, "kill")).toEqual({ kind: "kill" });
  });
});

describe("retry_for deadline", () => {
  it("7.x adds retry_for to float-second failed_at", () => {
    const rec = JobRecord.parse(`{"failed_at":${(NOW - 100_000) / 1000}}`);
    expect(retryForExpired(P7, rec, 99, NOW)).toBe(true);
    expect(retryForExpired(P7, rec, 101, NOW)).toBe(false);
  });
  it("8.x reads integer ms failed_at (time_for) and float seconds", () => {
    expect(retryForExpired(P8, JobRecord.parse(`{"failed_at":${Math.floor(NOW) - 100_000}}`), 99, NOW)).toBe(true);
    expect(retryForExpired(P8, JobRecord.parse(`{"failed_at":${Math.floor(NOW) - 100_000}}`), 101, NOW)).toBe(false);
    expect(retryForExpired(P8, JobRecord.parse(`{"failed_at":${(NOW - 100_000) / 1000}}`), 99, NOW)).toBe(true);
  });
  it("retry_for 0 is spent at once: Ruby compares failed_at with a later clock reading", () => {
    // Found by the differential fuzzer on 7.3.2 (Ruby sent the job to the dead set, Node retried it).
    expect(retryForExpired(P7, JobRecord.parse(`{"failed_at":${NOW / 1000}}`), 0, NOW)).toBe(true);
    expect(retryForExpired(P8, JobRecord.parse(`{"failed_at":${Math.floor(NOW)}}`), 0, Math.floor(NOW))).toBe(true);
  });
  it("8.0.0-8.1.5 misread the ms part as microseconds", () => {
    // failed_at = X.900 s; deadline X.900 + 1 vs now X+1.5 s: 8.1.6+ not expired, older (X.0009 + 1) expired.
    const failed = 1_795_305_964_900;
    const rec = JobRecord.parse(`{"failed_at":${failed}}`);
    expect(retryForExpired(profileForVersion("8.1.6"), rec, 1, failed + 500)).toBe(false);
    expect(retryForExpired(profileForVersion("8.1.5"), rec, 1, failed + 500)).toBe(true);
  });
});

describe("handleFailure: exhaustion per release", () => {
  it("retry: true, first failure: one ZADD into retry with a float-seconds score", async () => {
    const { redis, cmds } = fakeRedis();
    const r = await handleFailure(redis, job(), new Error("boom"), { queue: "default", config: cfg(P7), now: NOW });
    expect(r.outcome).toBe("retry");
    expect(r.retryAt).toBeCloseTo(NOW / 1000 + 15, 3);
    expect(cmds).toHaveLength(1);
    const [name, key, score, payload] = cmds[0]!;
    expect([name, key]).toEqual(["zadd", "retry"]);
    expect(score).toMatch(/^\d{10}\.\d+$/);
    const stored = JobRecord.parse(payload!);
    expect(stored.get("retry_count")).toBe(0);
    expect(stored.get("error_class")).toBe("Error");
    expect(stored.keys().slice(-4)).toEqual(["error_message", "error_class", "failed_at", "retry_count"]);
  });

  it("retry: 0 dies at once; retry: 1 dies on the second failure (retried_at set)", async () => {
    for (const p of [P6, P7, P8]) {
      const { redis, cmds } = fakeRedis();
      const r0 = await handleFailure(redis, job({ retry: 0 }), new Error("x"), {
        queue: "default",
        config: cfg(p),
        now: NOW,
      });
      expect(r0.outcome).toBe("dead");
      const r1 = await handleFailure(redis, job({ retry: 1, retry_count: 0, failed_at: 1 }), new Error("x"), {
        queue: "default",
        config: cfg(p),
        now: NOW,
      });
      expect(r1.outcome).toBe("dead");
      const deadPayload = cmds.filter((c) => c[0] === "zadd").map((c) => JobRecord.parse(c[3]!));
      expect(deadPayload[1]!.has("retried_at")).toBe(true);
      expect(deadPayload[1]!.get("retry_count")).toBe(1);
    }
  });

  it("retry: false / absent: stored nowhere, death handlers run", async () => {
    for (const extra of [{ retry: false }, { retry: null }]) {
      const { redis, cmds } = fakeRedis();
      const seen: string[] = [];
      const r = await handleFailure(redis, job(extra), new Error("x"), {
        queue: "default",
        config: cfg(P8, { deathHandlers: [(j) => void seen.push(j.getString("jid")!)] }),
        now: NOW,
      });
      expect(r.outcome).toBe("dropped");
      expect(cmds).toEqual([]);
      expect(seen).toEqual(["0123456789abcdef01234567"]);
    }
  });

  it("dead: false skips the dead set but runs death handlers; 8.0.8+ sets discarded_at in memory only", async () => {
    for (const p of [P6, P7, P8]) {
      const { redis, cmds } = fakeRedis();
      const seen: JobRecord[] = [];
      const r = await handleFailure(redis, job({ retry: 0, dead: false }), new Error("x"), {
        queue: "default",
        config: cfg(p, { deathHandlers: [(j) => void seen.push(j)] }),
        now: NOW,
      });
      expect(r.outcome).toBe("discarded");
      expect(cmds).toEqual([]);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.has("discarded_at")).toBe(p === P8);
      if (p === P8) expect(seen[0]!.raw("discarded_at")).toBe(String(Math.floor(NOW)));
    }
  });

  it("retry_for: 7.x ANDs it with the count; 8.1 uses it alone", async () => {
    const old = (NOW - 10_000_000) / 1000; // failed long ago, seconds
    const oldMs = Math.floor(NOW) - 10_000_000;
    // Deadline passed, count not used up: exhausted in both.
    for (const [p, fa] of [
      [P7, old],
      [P8, oldMs],
    ] as const) {
      const { redis } = fakeRedis();
      const r = await handleFailure(
        redis,
        job({ retry: 5, retry_count: 0, failed_at: fa, retry_for: 60 }),
        new Error("x"),
        { queue: "q", config: cfg(p), now: NOW },
      );
      expect(r.outcome).toBe("dead");
    }
    // Count used up, deadline far away: 7.x dead, 8.1 keeps retrying.
    const soon7 = await handleFailure(
      fakeRedis().redis,
      job({ retry: 1, retry_count: 0, retry_for: 1e6 }),
      new Error("x"),
      { queue: "q", config: cfg(P7), now: NOW },
    );
    expect(soon7.outcome).toBe("dead");
    const soon8 = await handleFailure(
      fakeRedis().redis,
      job({ retry: 1, retry_count: 0, failed_at: Math.floor(NOW), retry_for: 1e6 }),
      new Error("x"),
      { queue: "q", config: cfg(P8), now: NOW },
    );
    expect(soon8.outcome).toBe("retry");
    // 6.4.1 knows no retry_for.
    const r6 = await handleFailure(
      fakeRedis().redis,
      job({ retry: 5, retry_count: 0, failed_at: old, retry_for: 60 }),
      new Error("x"),
      { queue: "q", config: cfg(P6), now: NOW },
    );
    expect(r6.outcome).toBe("retry");
  });
});

describe("handleFailure: retryIn and retriesExhausted", () => {
  const run = async (p: typeof P7, handler: HandlerOptions, extra: Record<string, unknown> = {}, rnd = 0) => {
    const { redis, cmds } = fakeRedis();
    const deaths: JobRecord[] = [];
    const r = await handleFailure(redis, job(extra), new Error("x"), {
      queue: "default",
      handler,
      config: cfg(p, { random: () => rnd, deathHandlers: [(j) => void deaths.push(j)] }),
      now: NOW,
    });
    return { r, cmds, deaths };
  };

  it("a number > 0 is the delay, plus the release's jitter", async () => {
    for (const p of [P6, P7, P8]) {
      const { r, cmds } = await run(p, { retryIn: () => 100 }, {}, 0.5);
      expect(r.outcome).toBe("retry");
      // count 0 at 0.5: rand(10)*(0+1) = rand(10*(0+1)) = 5.
      expect(r.retryAt).toBeCloseTo(NOW / 1000 + 100 + 5, 3);
      expect(cmds[0]![0]).toBe("zadd");
    }
  });

  it("kill sends to the dead set (7+); 6.4.1 does not know it and uses the default delay", async () => {
    expect((await run(P7, { retryIn: () => "kill" })).r.outcome).toBe("dead");
    expect((await run(P8, { retryIn: () => "kill" })).r.outcome).toBe("dead");
    const six = await run(P6, { retryIn: () => "kill" });
    expect(six.r.outcome).toBe("retry");
    expect(six.r.retryAt).toBeCloseTo(NOW / 1000 + 15, 3);
  });

  it("discard: 7.x drops silently; 8.1 runs death handlers with discarded_at", async () => {
    const seven = await run(P7, { retryIn: () => "discard" });
    expect(seven.r.outcome).toBe("discarded");
    expect(seven.cmds).toEqual([]);
    expect(seven.deaths).toEqual([]);
    const eight = await run(P8, { retryIn: () => "discard" });
    expect(eight.r.outcome).toBe("discarded");
    expect(eight.cmds).toEqual([]);
    expect(eight.deaths).toHaveLength(1);
    expect(eight.deaths[0]!.has("discarded_at")).toBe(true);
    const e807 = await run(profileForVersion("8.0.7"), { retryIn: () => "discard" });
    expect(e807.deaths).toHaveLength(1);
    expect(e807.deaths[0]!.has("discarded_at")).toBe(false);
  });

  it("a throwing retryIn falls back to the default delay", async () => {
    const { r } = await run(P8, {
      retryIn: () => {
        throw new Error("bad block");
      },
    });
    expect(r.retryAt).toBeCloseTo(NOW / 1000 + 15, 3);
  });

  it("retriesExhausted 'discard': 6.x ignores it; 7.2-8.0.6 skip dead set and handlers; 8.0.7+ run handlers", async () => {
    const h: HandlerOptions = { retriesExhausted: () => "discard" };
    const six = await run(P6, h, { retry: 0 });
    expect(six.r.outcome).toBe("dead");
    expect(six.deaths).toHaveLength(1);
    const seven = await run(P7, h, { retry: 0 });
    expect(seven.r.outcome).toBe("discarded");
    expect(seven.cmds).toEqual([]);
    expect(seven.deaths).toEqual([]);
    const eight = await run(P8, h, { retry: 0 });
    expect(eight.r.outcome).toBe("discarded");
    expect(eight.cmds).toEqual([]);
    expect(eight.deaths).toHaveLength(1);
    expect(eight.deaths[0]!.has("discarded_at")).toBe(true);
  });

  it("death handlers run after the dead-set insert (before it in 6.0.0-6.0.3)", async () => {
    for (const [v, handlersFirst] of [
      ["6.0.3", true],
      ["6.0.4", false],
      ["8.1.7", false],
    ] as const) {
      const order: string[] = [];
      const { redis, cmds } = fakeRedis();
      await handleFailure(redis, job({ retry: 0 }), new Error("x"), {
        queue: "default",
        config: cfg(profileForVersion(v), {
          deathHandlers: [() => void order.push(`handler after ${cmds.length} commands`)],
        }),
        now: NOW,
      });
      expect(order).toEqual([handlersFirst ? "handler after 0 commands" : "handler after 5 commands"]);
    }
  });

  it("the caller's record is not modified", async () => {
    const rec = job();
    const before = rec.toString();
    await handleFailure(fakeRedis().redis, rec, new Error("x"), { queue: "default", config: cfg(P7), now: NOW });
    expect(rec.toString()).toBe(before);
  });
});

describe("payload rewrite", () => {
  it("retry_queue wins over the fetched queue; backtrace N keeps N lines in the release's base64", async () => {
    const { redis, cmds } = fakeRedis();
    const err = new Error("x");
    await handleFailure(redis, job({ retry_queue: "low", backtrace: 2 }), err, {
      queue: "default",
      config: cfg(P6),
      now: NOW,
    });
    const stored = JobRecord.parse(cmds[0]![3]!);
    expect(stored.get("queue")).toBe("low");
    const bt = stored.getString("error_backtrace")!;
    expect(bt.endsWith("\n")).toBe(true); // 6.4.1: Base64.encode64
    expect(decodeBacktrace(bt)).toHaveLength(2);
  });
  it("without retry_queue the queue becomes the fetched queue", async () => {
    const { redis, cmds } = fakeRedis();
    await handleFailure(redis, job({ queue: "elsewhere" }), new Error("x"), {
      queue: "default",
      config: cfg(P8),
      now: NOW,
    });
    const stored = JobRecord.parse(cmds[0]![3]!);
    expect(stored.get("queue")).toBe("default");
    expect(stored.raw("failed_at")).toMatch(/^\d{13}$/);
  });
});

describe("sendToDead", () => {
  it("MULTI ZADD + ZREMRANGEBYSCORE (now - timeout) + ZREMRANGEBYRANK 0 -max, numbers as Ruby floats", async () => {
    const { redis, cmds } = fakeRedis();
    await sendToDead(redis, "{not json", { profile: P7 }, 1_795_305_965_097.1036);
    expect(cmds).toEqual([
      ["multi"],
      ["zadd", "dead", "1795305965.0971036", "{not json"],
      ["zremrangebyscore", "dead", "-inf", String(1_795_305_965.0971036 - 15_552_000)],
      ["zremrangebyrank", "dead", "0", "-10000"],
      ["exec"],
    ]);
    const c2 = fakeRedis();
    await sendToDead(c2.redis, "x", { profile: P7, deadMaxJobs: 5, deadTimeoutSeconds: 60 }, 1_000_000_000_000);
    expect(c2.cmds.slice(1, 4)).toEqual([
      ["zadd", "dead", "1000000000.0", "x"],
      ["zremrangebyscore", "dead", "-inf", "999999940.0"],
      ["zremrangebyrank", "dead", "0", "-5"],
    ]);
  });
});
