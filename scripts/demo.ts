// npm run demo: real Ruby Sidekiq and Node exchanging jobs on one Redis.
// Uses REDIS_URL when set, else starts a throwaway redis-server on a free port.
// SIDEKIQ_VERSION picks the Ruby side (6.4.1, 7.3.2 or 8.1.7; default 8.1.7).
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { SidekiqBackend } from "../harness/backend.js";
import { LocalBackend, installFixtures, removeFixtures, runCaptured } from "../harness/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { startRedis, type RedisServer } from "../harness/redis-server.js";
import { selectedTargets } from "../harness/versions.js";
import {
  applyFailure,
  decodePayloadTime,
  JobRecord,
  profileForVersion,
  secondsString,
} from "../src/core/wire/index.js";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import type { Logger } from "../src/core/logging/logger.js";

const quietLogger: Logger = { debug() {}, info() {}, warn() {}, error: (m) => console.error(m) };

async function until<T>(fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const say = (s: string) => console.log(s);

/** Ruby in this very container (the compose fleet's demo service): `ruby` on PATH. */
function fleetRuby(fixtures: string, url: string): Pick<SidekiqBackend, "runRuby" | "rubyRedisUrl"> {
  return {
    rubyRedisUrl: (db) => `${url}/${db}`,
    runRuby: (_target, script, args = [], o = {}) =>
      runCaptured(["ruby", `${fixtures}/${script}`, ...args], `ruby ${script}`, o, { ...process.env, ...o.env }),
  };
}
const target = selectedTargets(process.env.SIDEKIQ_VERSION ?? "8.1.7")[0]!;
const profile = profileForVersion(target.version);

say(`sidekiq-bridge demo: Node <-> real Ruby Sidekiq ${target.version} (Debian ${target.suite})`);
// In docker-compose.yml's demo service (SIDEKIQ_BRIDGE_DEMO_RUBY=fleet) Ruby is
// at hand already: this container's Sidekiq for Ruby's client calls, the
// fleet's sidekiq-8 service for running jobs. Elsewhere the demo builds its own.
const inFleet = process.env.SIDEKIQ_BRIDGE_DEMO_RUBY === "fleet";
let roots: Record<string, string> = {};
let root = "";
let fixtures = "/opt/sidekiq-bridge/fixtures";
const runId = `demo-${randomBytes(3).toString("hex")}`;
if (!inFleet) {
  say("Preparing the Ruby side (the first run builds a Debian root filesystem, about a minute)...");
  roots = await prepareRootfs([target]);
  root = roots[target.suite]!;
  fixtures = installFixtures(root, runId);
}

let server: RedisServer | undefined;
let url = process.env.REDIS_URL;
if (!url) {
  ensureDebianPackages({ "redis-server": "redis-server" });
  server = await startRedis();
  url = server.url;
  say(`Started a throwaway Redis at ${url} (pid ${server.pid}).`);
} else say(`Using REDIS_URL=${url.replace(/\/\/[^@]*@/, "//***@")}.`);

// With a REDIS_URL of your own, the demo keeps to database 15 (DEMO_DB to change).
url = url.replace(/\/\d+$/, "");
const db = Number(process.env.DEMO_DB ?? (server ? 0 : 15));
const redis = new Redis(`${url}/${db}`);
const backend: Pick<SidekiqBackend, "runRuby" | "rubyRedisUrl"> = inFleet
  ? fleetRuby(fixtures, url)
  : new LocalBackend(roots, fixtures, join(tmpdir(), runId), url);
const sidekiq = inFleet
  ? undefined
  : await (backend as LocalBackend).startSidekiq(target, {
      queues: ["demo"],
      concurrency: 2,
      env: { REDIS_URL: backend.rubyRedisUrl(db) },
    });
const rubyLog = () => sidekiq?.log() ?? "(the sidekiq-8 service's: docker compose logs sidekiq-8)";
try {
  await redis.del("queue:to-node", "bridge:received");

  say("\n1. Ruby enqueues a job with awkward arguments for Node (queue `to-node`):");
  const r = await backend.runRuby(
    target,
    "eval.rb",
    [
      `Sidekiq::Client.push("class" => "RecordJob", "queue" => "to-node", "args" => [2**64 + 1, 1.0, -0.5, "é", {"a" => [], "b" => {}}, nil, true])`,
    ],
    { env: { REDIS_URL: backend.rubyRedisUrl(db) } },
  );
  if (r.code !== 0) throw new Error(r.stderr);

  const popped = await redis.brpop("queue:to-node", 5);
  if (!popped) throw new Error("Node did not receive the job");
  const raw = popped[1];
  say(`   Node fetched: ${raw}`);
  const job = JobRecord.parse(raw);
  say(`   class=${job.get("class")} jid=${job.get("jid")} args=${job.raw("args")}`);
  say(
    `   created_at ${job.raw("created_at")} -> ${new Date(decodePayloadTime(job.raw("created_at")!)).toISOString()} (${profile.payloadTime} in Sidekiq ${target.version})`,
  );
  say(
    `   first arg read losslessly as ${String((job.get("args") as unknown[])[0])}n (a JSON.parse would give 18446744073709552000)`,
  );

  say("\n2. Node fails it the way Sidekiq's retry does and hands it to Ruby's queue `demo` via the retry set:");
  job.set("retry_queue", "demo");
  applyFailure(job, { errorClass: "RuntimeError", message: "Node could not do it" }, profile);
  await redis.zadd("retry", secondsString(Date.now()), job.toString());
  say(`   retry entry: ${job.toString()}`);

  say("\n3. Ruby's scheduler promotes it and a real Ruby worker runs it:");
  const got = await until(async () =>
    (await redis.lrange("bridge:received", 0, -1)).find((s) => s.includes(job.get("jid") as string)),
  ).catch(() => {
    throw new Error(`Ruby did not run the job; its log:\n${rubyLog()}`);
  });
  const rec = JSON.parse(got) as { args_json: string; job: { retry_count: number; error_class: string } };
  say(
    `   Ruby received args ${rec.args_json} (retry_count=${rec.job.retry_count}, error_class=${rec.job.error_class})`,
  );
  say(`   identical to what Ruby enqueued: ${rec.args_json === job.raw("args") ? "yes" : "NO"}`);

  say(
    "\n4. Node's client enqueues for Ruby (client.job(...).performAsync), in Sidekiq " + target.version + "'s dialect:",
  );
  const client = new Client({ redis: `${url}/${db}`, dialect: "auto", autoFallback: target.version });
  const jid = await client.job<[string, number]>("RecordJob", { queue: "demo" }).performAsync("hello from Node", 42);
  const ranInRuby = await until(async () =>
    (await redis.lrange("bridge:received", 0, -1)).find((x) => x.includes(jid!)),
  );
  say(`   Ruby ran ${jid}: args ${(JSON.parse(ranInRuby) as { args_json: string }).args_json}`);

  say("\n5. A Node worker takes Ruby's jobs for a class Ruby does not have, and shows up in Ruby's ProcessSet:");
  const worker = new Worker({
    redis: `${url}/${db}`,
    dialect: "auto",
    autoFallback: target.version,
    queues: ["to-node"],
    concurrency: 2,
    logger: quietLogger,
  });
  const greeted: string[] = [];
  worker.register<[string]>("GreeterJob", ([name]) => {
    greeted.push(name);
  });
  await worker.start();
  await backend.runRuby(
    target,
    "eval.rb",
    [`Sidekiq::Client.push("class" => "GreeterJob", "queue" => "to-node", "args" => ["Ruby"])`],
    {
      env: { REDIS_URL: backend.rubyRedisUrl(db) },
    },
  );
  await until(async () => greeted[0]);
  say(`   Node's GreeterJob greeted "${greeted[0]}".`);
  const procs = await backend.runRuby(
    target,
    "eval.rb",
    [
      `Sidekiq::ProcessSet.new.map { |p| "#{p["hostname"]} pid #{p["pid"]} #{p["version"] || "(6.x)"} queues=#{p["queues"].join(",")}" }`,
    ],
    {
      env: { REDIS_URL: backend.rubyRedisUrl(db) },
    },
  );
  say(`   Sidekiq::ProcessSet (Ruby's view): ${procs.stdout.split("__BRIDGE_RESULT__ ")[1]?.trim()}`);
  await worker.stop();
  await client.close();
  say("\nDone.");
} finally {
  await sidekiq?.stop();
  redis.disconnect();
  await server?.stop();
  if (root) removeFixtures(root, fixtures);
}
