// The bridge under a Redis user limited to its documented ACL line
// (src/core/redis/acl.ts, docs/OPERATING.md "Redis ACL"): the worker with both
// fetches and every add-on, the client, the dashboard with a bulk action, the
// CLI and the migration tools, with real Ruby Sidekiq beside it under the
// same line plus its own extras. Redis logs every refusal (ACL LOG): none may
// come from the bridge's user. Then a user that lacks a command: one line
// naming the permission, from the CLI, a push and a running worker.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as otel from "@opentelemetry/api";
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import { serverKnowsClientSetinfo } from "../harness/servers.js";
import { Client } from "../src/core/client/client.js";
import { CronApi } from "../src/addons/sidekiq-cron/index.js";
import { arrayEnumerator } from "../src/core/iterable/iterable.js";
import type { Logger } from "../src/core/logging/logger.js";
import { instrumentWorker, registerFleetMetrics } from "../src/tools/metrics/prometheus.js";
import { SidekiqApi } from "../src/core/api/sidekiq-api.js";
import { RedisPermissionError } from "../src/core/redis/acl.js";
import { connectRedis } from "../src/core/redis/connection.js";
import { tracingClientMiddleware, tracingServerMiddleware } from "../src/tools/tracing/opentelemetry.js";
import { uniqueJobsClient } from "../src/addons/sidekiq-unique-jobs/index.js";
import { startWebServer } from "../src/assembly/web.js";
import { Worker } from "../src/assembly/worker.js";
import { startAclRedis, without, type AclRedis } from "./support/acl.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

const DB = 2;
const NOPERM_LINE =
  /^Redis user '\w+' may not run '[A-Z|]+' \(NOPERM\): add \+[a-z|]+ to its ACL, see docs\/OPERATING\.md \(Redis ACL\)$/;

function captureLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (m: string, ctx?: Record<string, unknown>) =>
    void lines.push(`${level} ${m}${ctx ? ` ${JSON.stringify(ctx)}` : ""}`);
  return { lines, debug: () => {}, info: log("info"), warn: log("warn"), error: log("error") };
}

/** The built CLI, run to its end. */
function cli(args: string[], url: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["dist/assembly/main.js", ...args, "--redis", url], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describeEachSidekiq(
  "a Redis user with only the bridge's ACL",
  (sk) => {
    let acl: AclRedis;
    let admin: Redis;
    let url: string;
    const closers: Array<() => Promise<unknown>> = [];
    beforeAll(async () => {
      acl = await startAclRedis([
        { name: "bridge" },
        // Ruby's redis-client sends CLIENT SETINFO on connect, which Valkey and Redis 7.2+ know.
        // Sidekiq's scheduled poller loads its Lua with SCRIPT LOAD on its first poll (scheduled.rb:54),
        // which may come before or after this file's checks: granted here as OPERATING.md says.
        { name: "ruby", extra: ["+script|load", ...(serverKnowsClientSetinfo() ? ["+client|setinfo"] : [])] },
        { name: "narrow", extra: without("scard", "lpush", "blmpop", "brpop", "smembers") },
        { name: "noselect", extra: without("select") },
        { name: "revoked" },
      ]);
      url = acl.url("bridge", DB);
      admin = acl.admin(DB);
    });
    afterAll(async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      await acl?.stop();
    });

    it("the worker (both fetches, every add-on), the client and Ruby Sidekiq run jobs", async () => {
      const logger = captureLogger();
      const tracerProvider = new BasicTracerProvider();
      const ran: string[] = [];
      const record = (name: string) => () => void ran.push(name);
      const worker = new Worker({
        redis: url,
        dialect: 8,
        queues: ["acl", "acl-cron", "acl-sched", "acl-unique", "acl-thr"],
        concurrency: 5,
        pollIntervalAverage: 1,
        timeout: 5,
        logger,
        cron: { pollInterval: 1, initialWait: 0 },
        sidekiqScheduler: { schedule: { aclEvery: { every: "1s", class: "SchedJob", queue: "acl-sched" } } },
        uniqueJobs: { gem: 8 },
        throttled: { classes: { ThrJob: { concurrency: { limit: 1 } } } },
      });
      worker.use(tracingServerMiddleware({ api: otel, tracerProvider }));
      for (const cls of ["PlainJob", "CronJob", "SchedJob", "UniqueJob", "ThrJob"]) worker.register(cls, record(cls));
      // Retried in an hour: it stays in the retry set for the dashboard's bulk action.
      worker.register(
        "FailJob",
        () => {
          throw new Error("fails under ACL too");
        },
        { retryIn: () => 3600 },
      );
      worker.registerIterable<[number], number>("IterJob", {
        buildEnumerator: ([n], cursor) => arrayEnumerator([...Array(n).keys()], cursor),
        eachIteration: (i) => void ran.push(`IterJob:${i}`),
      });
      const registry = await instrumentWorker(worker);
      const basic = new Worker({ redis: url, dialect: 8, queues: ["acl-basic"], fetch: "basic", logger });
      basic.register("BasicJob", record("BasicJob"));
      closers.push(
        () => worker.stop(),
        () => basic.stop(),
      );
      await worker.start();
      await basic.start();

      const cron = connectRedis(url).redis;
      closers.push(async () => cron.disconnect());
      await new CronApi({ redis: cron }).create({
        name: "acl",
        cron: "* * * * * *",
        class: "CronJob",
        queue: "acl-cron",
      });

      const client = new Client({ redis: url, dialect: 8 });
      closers.push(() => client.close());
      client.use(uniqueJobsClient({ gem: 8 }));
      client.use(tracingClientMiddleware({ api: otel, tracerProvider }));
      await client.job("PlainJob", { queue: "acl" }).performAsync(1);
      await client.job("PlainJob", { queue: "acl" }).performBulk([[2], [3]]);
      await client.job("PlainJob", { queue: "acl" }).performIn(1, 4);
      await client.job("BasicJob", { queue: "acl-basic" }).performAsync(1);
      await client.job("UniqueJob", { queue: "acl-unique", lock: "until_executed" }).performAsync(1);
      await client.job("ThrJob", { queue: "acl-thr" }).performBulk([[1], [2], [3]]);
      await client.job("IterJob", { queue: "acl" }).performAsync(3);
      await client.job("FailJob", { queue: "acl", retry: 3 }).performAsync(1);

      const ruby = await sk.startSidekiq({ queues: ["acl-ruby"], env: { REDIS_URL: acl.url("ruby", DB) } });
      closers.push(() => ruby.stop());
      await client.job("RecordJob", { queue: "acl-ruby" }).performAsync("from node");

      const count = (name: string) => ran.filter((r) => r === name).length;
      await waitFor(
        "every kind of job to run under the ACL user",
        async () =>
          count("PlainJob") === 4 &&
          count("BasicJob") === 1 &&
          count("UniqueJob") === 1 &&
          count("ThrJob") === 3 &&
          count("CronJob") > 0 &&
          count("SchedJob") > 0 &&
          ran.includes("IterJob:2") &&
          (await admin.zcard("retry")) === 1 &&
          (await admin.llen("bridge:received")) === 1,
        60_000,
        () => `ran: ${ran.join(" ")}\n${logger.lines.join("\n")}`,
      );
      // Ruby and Node see each other in the process set.
      await waitFor(
        "Ruby and both Node workers in the process set",
        async () => (await admin.scard("processes")) === 3,
      );
      expect(await registry.metrics()).toMatch(/sidekiq_jobs_processed_total/);
      // The unique lock is released once its job ran.
      await waitFor("the unique lock to go", async () => (await admin.keys("uniquejobs:*:LOCKED")).length === 0);
      expect(logger.lines.filter((l) => /NOPERM|may not/.test(l))).toEqual([]);
      // Ruby's refusals too: the extras the docs name are all it needs.
      expect(await acl.denials("ruby")).toEqual([]);
    }, 120_000);

    it("the dashboard's pages and a bulk action", async () => {
      const web = await startWebServer({ redis: url, port: 0, apiOptions: { dialect: 8 } });
      closers.push(() => web.close());
      const pages = ["", "busy", "queues", "queues/acl", "retries", "scheduled", "morgue", "metrics", "cron", "locks"];
      let cookie = "";
      let token = "";
      for (const page of [...pages, "recurring-jobs", "locks/changelogs"]) {
        const res = await fetch(`${web.url}${page}`, cookie ? { headers: { cookie } } : {});
        const body = await res.text();
        expect(res.status, `${page}: ${body.slice(0, 300)}`).toBe(200);
        cookie ||= res.headers.get("set-cookie")!.split(";")[0]!;
        token ||= /name="authenticity_token" value="([^"]+)"/.exec(body)?.[1] ?? "";
      }
      const posted = await fetch(`${web.url}retries/all`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ authenticity_token: token, action: "kill" }).toString(),
      });
      expect(posted.status).toBe(303);
      expect(await admin.zcard("retry")).toBe(0);
      expect(await admin.zcard("dead")).toBe(1);
      // The fleet's Prometheus metrics (`sidekiq-bridge metrics`) read through the same API.
      const api = new SidekiqApi({ redis: url, dialect: 8 });
      closers.push(() => api.close());
      expect(await (await registerFleetMetrics(api)).metrics()).toMatch(/sidekiq_dead_set_size 1/);
    });

    it("the CLI and the migration tools", async () => {
      await admin.lpush(
        "queue:acl-move",
        JSON.stringify({
          class: "MoveJob",
          jid: "a1b2c3d4e5f6a7b8c9d0e1f2",
          args: [],
          queue: "acl-move",
          created_at: 1700000000000,
          enqueued_at: 1700000000000,
        }),
      );
      await admin.sadd("queues", "acl-move");
      const dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-acl-"));
      closers.push(async () => rmSync(dir, { recursive: true, force: true }));
      const runs: string[][] = [
        ["stats"],
        ["queues"],
        ["queues", "show", "acl-move"],
        ["processes"],
        ["scheduled", "list"],
        ["retries", "list"],
        ["dead", "list"],
        ["dead", "retry", "--all"],
        ["cron", "list"],
        ["schedule", "list"],
        ["migrate", "audit", "--node-classes", "PlainJob"],
        ["migrate", "move", "--from", "acl-move", "--to", "acl-moved", "--all"],
        ["migrate", "timestamps", "--to", "7"],
        ["cron", "enqueue", "acl"],
        ["schedule", "enqueue", "aclEvery"],
        ["export", join(dir, "dump.msgpack")],
      ];
      for (const args of runs) {
        const r = cli(args, url);
        expect([0, 3], `${args.join(" ")}: ${r.stderr}`).toContain(r.code);
      }
      const restored = cli(["import", join(dir, "dump.msgpack")], acl.url("bridge", DB + 1));
      expect(restored.code, restored.stderr).toBe(0);
      expect(await admin.llen("queue:acl-moved")).toBe(1);
    });

    it("ACL LOG holds no refusal of the bridge's user", async () => {
      expect(await acl.denials("bridge")).toEqual([]);
    });

    it("a user that may not SELECT its database writes nothing to database 0, and says which rule it lacks", async () => {
      const noselect = acl.url("noselect", DB);
      const client = new Client({ redis: noselect, dialect: 8 });
      closers.push(() => client.close());
      const push = client.job("PlainJob", { queue: "acl-noselect" }).performAsync(1);
      await expect(push).rejects.toBeInstanceOf(RedisPermissionError);
      await expect(push).rejects.toThrow(
        /^Redis user 'noselect' may not run 'SELECT' \(NOPERM\): add \+select to its ACL, see docs\/OPERATING\.md \(Redis ACL\)$/,
      );
      const stats = cli(["stats"], noselect);
      expect(stats.code).toBe(1);
      expect(stats.stderr.trim().split("\n")).toEqual([
        "sidekiq-bridge stats: Redis user 'noselect' may not run 'SELECT' (NOPERM): add +select to its ACL, see docs/OPERATING.md (Redis ACL)",
      ]);
      const w = new Worker({ redis: noselect, dialect: 8, queues: ["acl-noselect"], logger: captureLogger() });
      closers.push(() => w.stop());
      await expect(w.start()).rejects.toThrow(/may not run 'SELECT' \(NOPERM\): add \+select /);
      const db0 = acl.admin(0);
      expect(await db0.exists("queue:acl-noselect", "queues")).toBe(0);
    });

    it("a fetch connection whose SELECT is refused on reconnect closes, and fetches nothing from database 0", async () => {
      const logger = captureLogger();
      const w = new Worker({
        redis: acl.url("revoked", DB),
        dialect: 8,
        queues: ["acl-revoked"],
        fetch: "basic",
        logger,
      });
      closers.push(() => w.stop());
      w.register("RevokedJob", () => {
        throw new Error("ran a job of database 0");
      });
      const fetchErrors: unknown[] = [];
      w.on("fetch:error", ({ error }) => void fetchErrors.push(error));
      await w.start();
      const db0 = acl.admin(0);
      await db0.lpush(
        "queue:acl-revoked",
        JSON.stringify({ class: "RevokedJob", jid: "0123456789abcdef01234567", args: [] }),
      );
      await db0.call("acl", "setuser", "revoked", "-select");
      // Only the fetch lane's connection drops (the command connection stays, on its database).
      const lane = await waitFor(
        "the fetch lane blocked in Redis",
        async () =>
          /id=(\d+) .*user=revoked/.exec(
            ((await db0.call("client", "list")) as string)
              .split("\n")
              .find((l) => /cmd=(blmpop|brpop) /.test(l) && /user=revoked/.test(l)) ?? "",
          )?.[1],
      );
      await db0.call("client", "kill", "id", lane);
      // The fetch in flight failed, and the next one failed too: the lane closed rather than go on in database 0.
      await waitFor("two failed fetches", async () => fetchErrors.length >= 2);
      expect(await db0.llen("queue:acl-revoked")).toBe(1);
      expect(logger.lines.filter((l) => l.includes("may not run 'SELECT'"))).toHaveLength(1);
    });

    it("a command the user lacks fails with one line naming it: CLI, push, worker", async () => {
      const narrow = acl.url("narrow", DB);
      const stats = cli(["stats"], narrow);
      expect(stats.code).toBe(1);
      expect(stats.stderr.trim().split("\n")).toEqual([
        "sidekiq-bridge stats: Redis user 'narrow' may not run 'SCARD' (NOPERM): add +scard to its ACL, see docs/OPERATING.md (Redis ACL)",
      ]);

      const client = new Client({ redis: narrow, dialect: 8 });
      closers.push(() => client.close());
      const push = client.job("PlainJob", { queue: "acl-narrow" }).performAsync(1);
      await expect(push).rejects.toBeInstanceOf(RedisPermissionError);
      await expect(push).rejects.toThrow(NOPERM_LINE);

      // --dialect auto reads the fleet's heartbeats (SMEMBERS processes) at start.
      const auto = new Worker({ redis: narrow, dialect: "auto", autoFallback: 8, queues: ["acl-narrow"] });
      closers.push(() => auto.stop());
      await expect(auto.start()).rejects.toThrow(
        "Redis user 'narrow' may not run 'SMEMBERS' (NOPERM): add +smembers to its ACL, see docs/OPERATING.md (Redis ACL)",
      );

      const logger = captureLogger();
      const w = new Worker({ redis: narrow, dialect: 8, queues: ["acl-narrow"], fetch: "basic", logger });
      closers.push(() => w.stop());
      await w.start();
      // Several fetches refused, one line for it. (Its sidekiq-scheduler poller,
      // pushing through a script that LPUSHes, may add the line for that one.)
      await waitFor("three refused fetches", async () =>
        (await acl.denials("narrow")).some((d) => /^command toplevel (blmpop|brpop) \(x([3-9]|\d\d+)\)/.test(d)),
      );
      const lines = logger.lines.filter((l) => /NOPERM|permission/i.test(l));
      expect(lines).toContain(
        "error Redis user 'narrow' may not run 'BLMPOP' (NOPERM): add +blmpop to its ACL, see docs/OPERATING.md (Redis ACL)",
      );
      expect(new Set(lines).size, lines.join("\n")).toBe(lines.length);
      for (const l of lines)
        expect(l).toMatch(/^error Redis user 'narrow' may not .* see docs\/OPERATING\.md \(Redis ACL\)$/);
    });
  },
  (t) => t.version === "8.1.7",
);
