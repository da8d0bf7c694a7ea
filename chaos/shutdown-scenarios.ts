// Stopping a worker when Redis is gone: TERM arrives while jobs run and Redis
// is stopped or frozen. The worker must exit within its timeout plus a few
// seconds, with one clear line (no stack trace, no ioredis "Unhandled error
// event"), and a non-zero exit code; once Redis is back, a second worker
// recovers the unfinished jobs from the first one's working lists.
import { rmSync } from "node:fs";
import { startRedis } from "../harness/redis-server.js";
import { count, enqueue, type ScenarioResult, sleep, spawnNodeWorker, startDurableRedis, until } from "./scenarios.js";

export interface ShutdownResult extends ScenarioResult {
  /** The worker's -t. */
  timeoutSeconds: number;
  /** From TERM to the process's exit. */
  exitSeconds: number;
  exitCode: number | null;
  /** "[ioredis] Unhandled error event" lines in the worker's output. */
  unhandledErrors: number;
  /** Stack trace lines ("    at ...") in the worker's output. */
  stackLines: number;
  /** The worker's output from the TERM on. */
  log: string;
  /** All of the first worker's output. */
  fullLog: string;
}

/** Lines of `log` that are stack frames or ioredis' unhandled-error reports. */
export function noise(log: string): { unhandledErrors: number; stackLines: number } {
  return {
    unhandledErrors: (log.match(/Unhandled error event/g) ?? []).length,
    stackLines: log.split("\n").filter((l) => /^\s+at\s/.test(l)).length,
  };
}

/**
 * `jobs` jobs of `jobMs` run (longer than the worker's 5 s timeout); Redis is
 * stopped (its data kept: AOF) or frozen (SIGSTOP), then the worker gets TERM.
 * Redis comes back and a second worker runs what the first left behind.
 */
export async function termWithoutRedis(mode: "stopped" | "frozen", jobs = 10, jobMs = 15_000): Promise<ShutdownResult> {
  const timeoutSeconds = 5; // spawnNodeWorker's -t
  const durable = await startDurableRedis();
  const { cfg, url, redis, dir } = durable;
  let { server } = durable;
  const first = spawnNodeWorker(url, jobs);
  let second: ReturnType<typeof spawnNodeWorker> | undefined;
  let frozen = false;
  try {
    const sent = await enqueue(url, jobs, jobMs);
    await until(
      "every job to be running",
      async () => {
        // Held in the worker's working list (one-job fetches) and hash (batches).
        let running = 0;
        for (const k of await redis.keys("bridge:wip:*")) running += await redis.llen(k);
        for (const k of await redis.keys("bridge:working:*")) running += await redis.hlen(k);
        return (await redis.llen("queue:chaos")) === 0 && running === jobs;
      },
      30_000,
    );
    await sleep(500);
    if (mode === "stopped") {
      await server.stop(); // SIGTERM: Redis writes its AOF and exits
      await sleep(1000); // the worker notices
    } else {
      process.kill(server.pid, "SIGSTOP");
      frozen = true;
      await sleep(500);
    }
    const before = first.output().length;
    const exited = new Promise<number | null>((r) => first.once("exit", (code) => r(code)));
    const t0 = Date.now();
    first.kill("SIGTERM");
    const watchdog = setTimeout(() => first.kill("SIGKILL"), 60_000);
    const exitCode = await exited;
    clearTimeout(watchdog);
    const exitSeconds = (Date.now() - t0) / 1000;
    const log = first.output().slice(before);
    const whole = noise(first.output());

    // Redis back: a second worker recovers the first one's working lists.
    if (mode === "stopped") server = await startRedis(cfg);
    else {
      process.kill(server.pid, "SIGCONT");
      frozen = false;
    }
    const back = Date.now();
    second = spawnNodeWorker(url, jobs);
    await until("every job to have run", async () => (await count(redis, sent)).lost === 0, 120_000);
    const recoverySeconds = (Date.now() - back) / 1000;
    const c = await count(redis, sent);
    return {
      scenario: `TERM with Redis ${mode === "stopped" ? "stopped" : "frozen (SIGSTOP)"}, ${jobs} jobs running, -t ${timeoutSeconds}`,
      system: "sidekiq-bridge (reliable fetch)",
      sent: sent.length,
      ...c,
      recoverySeconds,
      timeoutSeconds,
      exitSeconds,
      exitCode,
      ...whole,
      log,
      fullLog: first.output(),
      notes: `exited ${exitSeconds.toFixed(1)} s after TERM (-t ${timeoutSeconds}) with code ${exitCode}; ${whole.unhandledErrors} unhandled-error lines, ${whole.stackLines} stack lines`,
    };
  } finally {
    if (frozen) process.kill(server.pid, "SIGCONT");
    first.kill("SIGKILL");
    second?.kill("SIGKILL");
    redis.disconnect();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
