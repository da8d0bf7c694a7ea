// Stopping, starting and pushing when Redis is gone: the library Worker's
// stop() settles within its timeout plus a few seconds and says what it could
// not do; the CLI worker exits with a clear line and its documented codes; a
// push or a start fails within a few seconds with one clear error; a running
// worker logs an outage once. Nothing ever prints ioredis' "Unhandled error
// event" or a stack trace, and what a stop left behind is recovered.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { noise } from "../chaos/shutdown-scenarios.js";
import { REPO_ROOT } from "../harness/local-backend.js";
import { freePort, type RedisServer, startRedis } from "../harness/redis-server.js";
import { Client } from "../src/core/client/client.js";
import { RedisUnavailableError } from "../src/core/redis/availability.js";
import { EXIT_INCOMPLETE } from "../src/core/server/signals.js";
import { SHUTDOWN_GRACE_MS } from "../src/core/server/stop-result.js";
import type { Logger } from "../src/core/logging/logger.js";
import { Worker } from "../src/assembly/worker.js";

const MAIN = join(REPO_ROOT, "dist", "assembly", "main.js");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Everything written to stderr and through console while `fn` runs (ioredis reports there). */
async function capturingStderr<T>(fn: () => Promise<T>): Promise<{ value: T; stderr: string }> {
  let stderr = "";
  const write = process.stderr.write.bind(process.stderr);
  const error = console.error;
  const warn = console.warn;
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    stderr += chunk.toString();
    return write(chunk, ...rest);
  }) as typeof process.stderr.write;
  console.error = (...a: unknown[]) => void (stderr += `${a.map(String).join(" ")}\n`);
  console.warn = (...a: unknown[]) => void (stderr += `${a.map(String).join(" ")}\n`);
  try {
    return { value: await fn(), stderr };
  } finally {
    process.stderr.write = write;
    console.error = error;
    console.warn = warn;
  }
}

function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const log = (l: string) => (m: string, ctx?: Record<string, unknown>) =>
    lines.push(`${l} ${m}${ctx ? ` ${JSON.stringify(ctx)}` : ""}`);
  return { logger: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") }, lines };
}

/** A Redis of this test's own (it is stopped and frozen), on a fixed port and data folder so it can come back. */
describe("stopping without Redis: the library Worker", () => {
  let server: RedisServer;
  let dir: string;
  let cfg: { port: number; dir: string; config: string[] };
  let url: string;
  let check: Redis;
  let frozen = false;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-stop-"));
    cfg = { port: await freePort(), dir, config: ["appendonly yes", "appendfsync always"] };
    server = await startRedis(cfg);
    url = `${server.url}/0`;
    check = new Redis(url, { maxRetriesPerRequest: null });
    check.on("error", () => {});
  });
  afterEach(async () => {
    if (frozen) process.kill(server.pid, "SIGCONT");
    frozen = false;
    check.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A worker whose jobs run until aborted; each records its jid when it finishes. */
  function longWorker(logger: Logger, timeout: number): Worker {
    const w = new Worker({ redis: url, dialect: 8, queues: ["long"], concurrency: 4, timeout, logger });
    w.register<[number]>("LongJob", async ([ms], ctx) => {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, ms);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(t);
          reject(ctx.signal.reason);
        });
      });
      await check.rpush("stop:finished", ctx.jid);
    });
    return w;
  }

  for (const mode of ["stopped", "frozen"] as const) {
    it(`Redis ${mode} while 4 jobs run: stop() settles within timeout + ${SHUTDOWN_GRACE_MS / 1000} s, says what it could not do, and a second worker recovers every job`, async () => {
      const c = new Client({ redis: url, dialect: 8 });
      const jids = (await c
        .job("LongJob", { queue: "long" })
        .performBulk([[60_000], [60_000], [60_000], [60_000]])) as string[];
      await c.close();
      const { logger, lines } = memoryLogger();
      const timeout = 2;
      const first = longWorker(logger, timeout);
      const { value, stderr } = await capturingStderr(async () => {
        await first.start();
        await until("4 jobs running", () => first.dump().length === 4);
        if (mode === "stopped") {
          await server.stop();
          await sleep(1000);
        } else {
          process.kill(server.pid, "SIGSTOP");
          frozen = true;
        }
        const t0 = Date.now();
        const result = await first.stop();
        const seconds = (Date.now() - t0) / 1000;
        await sleep(1500); // abandoned calls failing late must stay silent
        return { result, seconds };
      });
      const { result, seconds } = value;
      console.log(`library Worker.stop() with Redis ${mode}: ${seconds.toFixed(2)} s (timeout ${timeout} s)`);
      expect(seconds).toBeLessThan(timeout + 5);
      expect(seconds).toBeGreaterThanOrEqual(timeout);
      expect(result.clean).toBe(false);
      expect(result.pushedBack).toBe(0);
      expect(result.notPushedBack).toBe(4);
      expect(result.problems.join("; ")).toMatch(/heartbeat was not cleared/);
      const all = [...lines, stderr].join("\n");
      expect(noise(all)).toEqual({ unhandledErrors: 0, stackLines: 0 });
      expect(lines.filter((l) => /Stopped without Redis/.test(l))).toHaveLength(1);
      expect(lines.find((l) => /Stopped without Redis/.test(l))).toMatch(
        /4 unfinished jobs left in the working lists for recovery/,
      );
      // Nothing logged after "Bye!".
      expect(lines.at(-1)).toBe("info Bye!");
      if (mode === "stopped") expect(lines.filter((l) => /Redis connection lost/.test(l))).toHaveLength(1);

      // Redis back: the jobs wait in the first worker's working list.
      if (mode === "stopped") server = await startRedis(cfg);
      else {
        process.kill(server.pid, "SIGCONT");
        frozen = false;
      }
      // The jobs wait in the first worker's working list or hash, or, when the
      // frozen Redis ran the push back it had buffered, in their queue: never both.
      const wip = `bridge:wip:${first.identity}|queue:long`;
      const working = `bridge:working:${first.identity}|queue:long`;
      const held = async () => (await check.llen(wip)) + (await check.hlen(working));
      const left = await held();
      expect(left + (await check.llen("queue:long"))).toBe(4);
      if (mode === "stopped") expect(left).toBe(4);
      // The first worker's heartbeat would expire within 60 s; here it goes now
      // (the same pid hosts both workers, so the pid check cannot tell them apart).
      await check.del(first.identity);
      const second = new Worker({ redis: url, dialect: 8, queues: ["long"], concurrency: 4, logger });
      second.register("LongJob", async (_args, ctx) => void (await check.rpush("stop:finished", ctx.jid)));
      await second.start();
      await until("every job to run", async () => (await check.llen("stop:finished")) === 4);
      const r2 = await second.stop();
      expect(r2).toEqual({ clean: true, pushedBack: 0, notPushedBack: 0, problems: [] });
      expect(new Set(await check.lrange("stop:finished", 0, -1))).toEqual(new Set(jids));
      expect(await held()).toBe(0);
    }, 60_000);
  }

  it("quiet (TSTP) with Redis frozen returns within a few seconds and says so in one line; stop() then settles in time", async () => {
    const { logger, lines } = memoryLogger();
    const w = new Worker({ redis: url, dialect: 8, queues: ["quiet"], concurrency: 2, timeout: 1, logger });
    await w.start();
    process.kill(server.pid, "SIGSTOP");
    frozen = true;
    let t0 = Date.now();
    await w.quietDown();
    expect((Date.now() - t0) / 1000).toBeLessThan(SHUTDOWN_GRACE_MS / 1000 + 1);
    expect(w.quiet).toBe(true);
    expect(lines.filter((l) => /Quiet without Redis/.test(l))).toHaveLength(1);
    t0 = Date.now();
    const r = await w.stop();
    expect((Date.now() - t0) / 1000).toBeLessThan(1 + 5);
    expect(r.clean).toBe(false);
    expect(noise(lines.join("\n"))).toEqual({ unhandledErrors: 0, stackLines: 0 });
  }, 30_000);

  it("a running worker that loses Redis says so once, retries, says when it is back, and runs jobs again", async () => {
    const { logger, lines } = memoryLogger();
    const w = new Worker({ redis: url, dialect: 8, queues: ["quick"], concurrency: 2, timeout: 1, logger });
    w.register("QuickJob", async (_args, ctx) => void (await check.rpush("stop:finished", ctx.jid)));
    const { stderr } = await capturingStderr(async () => {
      await w.start();
      await server.stop();
      await sleep(4000);
      server = await startRedis(cfg);
      await until("the connection to be back", () => lines.some((l) => /Redis connection back/.test(l)), 15_000);
      const c = new Client({ redis: url, dialect: 8 });
      await c.job("QuickJob", { queue: "quick" }).performAsync();
      await c.close();
      await until("the job to run", async () => (await check.llen("stop:finished")) === 1);
      expect((await w.stop()).clean).toBe(true);
    });
    expect(lines.filter((l) => /Redis connection lost/.test(l))).toEqual([
      expect.stringMatching(/^warn Redis connection lost \(ECONN(REFUSED|RESET)[^)]*\); retrying$/),
    ]);
    expect(lines.filter((l) => /Redis connection back/.test(l))).toHaveLength(1);
    // No per-retry warnings from the fetch loop, heartbeat or poller.
    expect(lines.filter((l) => /^(warn|error)/.test(l))).toHaveLength(1);
    expect(noise(stderr)).toEqual({ unhandledErrors: 0, stackLines: 0 });
  }, 60_000);
});

describe("starting and pushing without Redis", () => {
  it("performAsync rejects within a few seconds with one RedisUnavailableError, and nothing else is printed", async () => {
    const port = await freePort(); // nobody listens there
    const { value, stderr } = await capturingStderr(async () => {
      const c = new Client({ redis: `redis://127.0.0.1:${port}/0`, dialect: 8 });
      const t0 = Date.now();
      const err = await c
        .job("X")
        .performAsync(1)
        .then(
          () => undefined,
          (e: Error) => e,
        );
      const seconds = (Date.now() - t0) / 1000;
      await c.close();
      await sleep(500);
      return { err, seconds };
    });
    expect(value.err).toBeInstanceOf(RedisUnavailableError);
    expect(value.err?.message).toBe(`Redis unreachable at 127.0.0.1:${port} (ECONNREFUSED 127.0.0.1:${port})`);
    expect(value.seconds).toBeLessThan(6);
    expect(stderr).toBe("");
  });

  it("Worker.start() rejects within a few seconds with a RedisUnavailableError and leaves nothing running", async () => {
    const port = await freePort();
    const { logger, lines } = memoryLogger();
    const { value, stderr } = await capturingStderr(async () => {
      const w = new Worker({ redis: `redis://127.0.0.1:${port}/0`, dialect: 8, logger, connectWaitMs: 2000 });
      const t0 = Date.now();
      const err = await w.start().then(
        () => undefined,
        (e: Error) => e,
      );
      const seconds = (Date.now() - t0) / 1000;
      const stopped = await w.stop();
      return { err, seconds, stopped };
    });
    expect(value.err).toBeInstanceOf(RedisUnavailableError);
    expect(value.seconds).toBeLessThan(3);
    expect(value.stopped.clean).toBe(true);
    expect(lines).toEqual([]);
    expect(stderr).toBe("");
  });
});

describe("stopping without Redis: the CLI worker", () => {
  function worker(url: string, extra: string[] = []) {
    const child = spawn(
      process.execPath,
      [MAIN, "worker", "-q", "cli", "-c", "2", "-t", "2", "--dialect", "8", ...extra],
      { cwd: REPO_ROOT, env: { ...process.env, REDIS_URL: url }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    return { child, exited, output: () => out };
  }

  it("Redis unreachable at start: one line, exit code 1, within a few seconds", async () => {
    const port = await freePort();
    const t0 = Date.now();
    const w = worker(`redis://127.0.0.1:${port}/0`);
    const code = await w.exited;
    const seconds = (Date.now() - t0) / 1000;
    console.log(`CLI worker start without Redis: exit ${code} after ${seconds.toFixed(2)} s`);
    expect(code).toBe(1);
    expect(w.output()).toBe(
      `sidekiq-bridge: Redis unreachable at 127.0.0.1:${port} (ECONNREFUSED 127.0.0.1:${port})\n`,
    );
    expect(seconds).toBeLessThan(12); // the 5 s wait + node start-up, seconds on a busy 2-core machine
  }, 30_000);

  it(`TERM with Redis stopped: exit code ${EXIT_INCOMPLETE} within -t + 5 s; a second TERM exits at once with 143`, async () => {
    const server = await startRedis();
    try {
      const w = worker(`${server.url}/0`);
      await until("the worker to start", () => /started/.test(w.output()));
      await server.stop();
      await sleep(500);
      let t0 = Date.now();
      w.child.kill("SIGTERM");
      expect(await w.exited).toBe(EXIT_INCOMPLETE);
      const seconds = (Date.now() - t0) / 1000;
      console.log(`CLI worker TERM without Redis (-t 2): exit ${EXIT_INCOMPLETE} after ${seconds.toFixed(2)} s`);
      expect(seconds).toBeLessThan(2 + 5);
      expect(w.output()).toMatch(
        /ERROR [^\n]*: Stopped without Redis \(ECONNREFUSED [^)]+\): .*the heartbeat was not cleared/,
      );
      expect(noise(w.output())).toEqual({ unhandledErrors: 0, stackLines: 0 });

      const frozenServer = await startRedis();
      const w2 = worker(`${frozenServer.url}/0`, ["-t", "20"]);
      try {
        await until("the second worker to start", () => /started/.test(w2.output()));
        process.kill(frozenServer.pid, "SIGSTOP");
        w2.child.kill("SIGTERM");
        await sleep(500);
        t0 = Date.now();
        w2.child.kill("SIGTERM");
        expect(await w2.exited).toBe(143);
        expect((Date.now() - t0) / 1000).toBeLessThan(2);
        expect(w2.output()).toMatch(/Got TERM again: exiting now/);
        expect(noise(w2.output())).toEqual({ unhandledErrors: 0, stackLines: 0 });
      } finally {
        process.kill(frozenServer.pid, "SIGCONT");
        w2.child.kill("SIGKILL");
        await frozenServer.stop();
      }
    } finally {
      await server.stop();
    }
  }, 60_000);
});
