// Fake mode: a client made after sidekiq-bridge/testing is loaded records each
// push as the payload the real client writes (the same normalization,
// middleware, argument check and encoding), opens no connection and reads no
// fleet. The real client here writes to an ioredis stand-in that records its
// pipelines, made while no recorder is installed.
import { Redis } from "ioredis";
import { beforeEach, describe, expect, it } from "vitest";
import { clear, clearAll, jobs, Queues, type TestJob } from "../../src/testing/index.js";
import { payloadOf } from "../../src/testing/queues.js";
import { testingRecorder } from "../../src/testing/recorder.js";
import { Client } from "../../src/core/client/client.js";
import type { ClientOptions } from "../../src/core/client/client-options.js";
import { installPushRecorder } from "../../src/core/client/atomic-push.js";
import { rubyFloatToS } from "../../src/core/wire/ruby-json.js";

/** An ioredis stand-in that keeps what a push writes: each LPUSH and ZADD member, with its key (and score). */
function recordingRedis() {
  const writes: Array<{ key: string; json: string; score?: string }> = [];
  const r = Object.create(Redis.prototype) as Redis & Record<string, unknown>;
  r.pipeline = (() => {
    const p = {
      sadd: () => p,
      lpush: (key: string, ...vals: string[]) => (vals.forEach((json) => writes.push({ key, json })), p),
      zadd: (key: string, ...pairs: string[]) => {
        for (let i = 0; i < pairs.length; i += 2) writes.push({ key, score: pairs[i]!, json: pairs[i + 1]! });
        return p;
      },
      exec: async () => [[null, 1]],
    };
    return p;
  }) as never;
  Object.defineProperty(r, "status", { value: "ready" });
  return { redis: r, writes };
}

/** A client on the stand-in: made with no recorder installed, so it writes as in production. */
function realClient(o: Omit<ClientOptions, "redis">) {
  const { redis, writes } = recordingRedis();
  installPushRecorder(undefined);
  try {
    return { client: new Client({ ...o, redis }), writes };
  } finally {
    installPushRecorder(testingRecorder);
  }
}

/** Nothing listens there: a client that tried to connect would warn. */
const NOWHERE = "redis://127.0.0.1:1";

function fakeClient(o: Omit<ClientOptions, "redis"> = {}) {
  const warnings: string[] = [];
  return { client: new Client({ ...o, redis: NOWHERE, warn: (m) => warnings.push(m) }), warnings };
}

const time = /"(created_at|enqueued_at)":[-0-9.e+]+/g;
/** Per-push fields aside: generated jids (a bulk's) and the push's times. */
const scrub = (json: string) => json.replace(time, '"$1":T').replace(/"jid":"[0-9a-f]{24}"/, '"jid":"J"');

beforeEach(() => clearAll());

describe("fake mode records what the real client writes", () => {
  for (const dialect of [6, 7, 8] as const) {
    it(`plain, scheduled and bulk pushes, with and without middleware (dialect ${dialect})`, async () => {
      const real = realClient({ dialect });
      const { client: fake, warnings } = fakeClient({ dialect });
      const tag = (c: Client) => c.use(async (ctx, next) => ((ctx.job.tagged = "yes"), next()));
      const pushes = async (c: Client) => {
        const j = c.unchecked.job("HardJob", { queue: "critical", retry: 3 });
        await j.set({ jid: "a".repeat(24) }).performAsync(1, "two", { three: [3.5] });
        await j.set({ jid: "b".repeat(24) }).performAt(1_900_000_000.25, "later");
        await c.pushBulk({ class: "BulkJob", args: [[1], [2]] });
        await c.pushBulk({ class: "BulkJob", args: [[3], [4]], at: 1_900_000_001 });
      };
      await pushes(real.client);
      await pushes(fake);
      tag(real.client);
      tag(fake);
      await pushes(real.client);
      await pushes(fake);

      const recorded = jobs();
      expect(recorded.map((j) => scrub(payloadOf(j))).sort()).toEqual(real.writes.map((w) => scrub(w.json)).sort());
      expect(recorded).toHaveLength(12);
      // A scheduled job keeps its time as `at`, the score Redis would hold.
      for (const w of real.writes.filter((w) => w.score !== undefined)) {
        const job = recorded.find((j) => scrub(payloadOf(j)) === scrub(w.json))!;
        expect(rubyFloatToS(Number(job.at))).toBe(w.score);
        expect(job).not.toHaveProperty("enqueued_at");
      }
      expect(warnings).toEqual([]);
    });
  }

  it("reads no fleet and opens no connection: the middleware's connection was never opened", async () => {
    const { client, warnings } = fakeClient();
    const seen: string[] = [];
    client.use(async (ctx, next) => (seen.push(ctx.redis.status), next()));
    expect(await client.profile()).toMatchObject({ dialect: 8 });
    await client.unchecked.job("HardJob").performAsync(1);
    await client.close();
    expect(seen).toEqual(["wait"]);
    expect(warnings).toEqual([]);
  });

  it("the arguments come back through JSON; what production refuses is refused", async () => {
    const { client } = fakeClient({ dialect: 8 });
    await client.unchecked.job("HardJob").performAsync(12345678901234567890n, 1.5, null, { a: "b" });
    expect(jobs("HardJob")[0]!.args).toEqual([12345678901234567890n, 1.5, null, { a: "b" }]);
    await expect(client.unchecked.job("HardJob").performAsync(new Date() as never)).rejects.toThrow(
      /must be native JSON types, but args\[0\] is a Date/,
    );
    expect(jobs("HardJob")).toHaveLength(1);
  });

  it("ActiveJob, performAllLater and a mailer's deliverLater are recorded under the wrapper and the job's class", async () => {
    const { client } = fakeClient({ dialect: 8 });
    await client.unchecked.activeJob("WelcomeJob").performLater(7);
    await client.unchecked.activeJob("WelcomeJob").performAllLater([[8], [9]]);
    await client.unchecked.mailer("UserMailer").deliverLater("welcome", [1], { params: { user: 1 } });
    expect(jobs("WelcomeJob").map((j) => (j.args as TestJob[])[0]!.arguments)).toEqual([[7], [8], [9]]);
    expect(jobs("ActionMailer::MailDeliveryJob")).toHaveLength(1);
    expect(jobs("ActionMailer::MailDeliveryJob")[0]!.queue).toBe("default");
    expect(jobs()).toHaveLength(4);
  });

  it("queries by class and queue; the class's array is live; clear and clearAll", async () => {
    const { client } = fakeClient();
    const hard = jobs("HardJob");
    await client.unchecked.job("HardJob").performAsync(1);
    await client.unchecked.job("HardJob", { queue: "low" }).performAsync(2);
    await client.unchecked.job("SoftJob", { queue: "low" }).performAsync(3);
    expect(hard.map((j) => j.args)).toEqual([[1], [2]]);
    expect(jobs({ queue: "low" }).map((j) => j.args)).toEqual([[2], [3]]);
    expect(jobs({ className: "HardJob", queue: "low" }).map((j) => j.args)).toEqual([[2]]);
    expect(Queues.get("default").map((j) => j.class)).toEqual(["HardJob"]);
    clear("HardJob");
    expect(hard).toEqual([]);
    expect(jobs().map((j) => j.class)).toEqual(["SoftJob"]);
    clearAll();
    expect(jobs()).toEqual([]);
  });
});
