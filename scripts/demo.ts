// npm run demo: real Ruby Sidekiq and Node exchanging jobs on one Redis.
// Uses REDIS_URL when set, else starts a throwaway redis-server on a free port.
// SIDEKIQ_VERSION picks the Ruby side (6.4.1, 7.3.2 or 8.1.7; default 8.1.7).
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalBackend, installFixtures, removeFixtures } from "../interop-tests/support/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../interop-tests/support/prepare.js";
import { startRedis, type RedisServer } from "../interop-tests/support/redis-server.js";
import { selectedTargets } from "../interop-tests/support/versions.js";
import { applyFailure, decodePayloadTime, JobRecord, profileForVersion, secondsString } from "../src/wire/index.js";

const say = (s: string) => console.log(s);
const target = selectedTargets(process.env.SIDEKIQ_VERSION ?? "8.1.7")[0]!;
const profile = profileForVersion(target.version);

say(`sidekiq-bridge demo: Node <-> real Ruby Sidekiq ${target.version} (Debian ${target.suite})`);
say("Preparing the Ruby side (the first run builds a Debian root filesystem, about a minute)...");
const roots = await prepareRootfs([target]);
const root = roots[target.suite]!;
const runId = `demo-${randomBytes(3).toString("hex")}`;
const fixtures = installFixtures(root, runId);

let server: RedisServer | undefined;
let url = process.env.REDIS_URL;
if (!url) {
  ensureDebianPackages({ "redis-server": "redis-server" });
  server = await startRedis();
  url = server.url;
  say(`Started a throwaway Redis at ${url} (pid ${server.pid}).`);
} else say(`Using REDIS_URL=${url.replace(/\/\/[^@]*@/, "//***@")}.`);

const db = Number(process.env.DEMO_DB ?? (server ? 0 : 15));
const redis = new Redis(`${url}/${db}`);
const backend = new LocalBackend(roots, fixtures, join(tmpdir(), runId), url);
const sidekiq = await backend.startSidekiq(target, { queues: ["demo"], concurrency: 2, env: { REDIS_URL: backend.rubyRedisUrl(db) } });
try {
  await redis.del("queue:to-node", "bridge:received");

  say("\n1. Ruby enqueues a job with awkward arguments for Node (queue `to-node`):");
  const r = await backend.runRuby(target, "eval.rb", [
    `Sidekiq::Client.push("class" => "RecordJob", "queue" => "to-node", "args" => [2**64 + 1, 1.0, -0.5, "é", {"a" => [], "b" => {}}, nil, true])`,
  ], { env: { REDIS_URL: backend.rubyRedisUrl(db) } });
  if (r.code !== 0) throw new Error(r.stderr);

  const popped = await redis.brpop("queue:to-node", 5);
  if (!popped) throw new Error("Node did not receive the job");
  const raw = popped[1];
  say(`   Node fetched: ${raw}`);
  const job = JobRecord.parse(raw);
  say(`   class=${job.get("class")} jid=${job.get("jid")} args=${job.raw("args")}`);
  say(`   created_at ${job.raw("created_at")} -> ${new Date(decodePayloadTime(job.raw("created_at")!)).toISOString()} (${profile.payloadTime} in Sidekiq ${target.version})`);
  say(`   first arg read losslessly as ${String((job.get("args") as unknown[])[0])}n (a JSON.parse would give 18446744073709552000)`);

  say("\n2. Node fails it the way Sidekiq's retry does and hands it to Ruby's queue `demo` via the retry set:");
  job.set("retry_queue", "demo");
  applyFailure(job, { errorClass: "RuntimeError", message: "Node could not do it" }, profile);
  await redis.zadd("retry", secondsString(Date.now()), job.toString());
  say(`   retry entry: ${job.toString()}`);

  say("\n3. Ruby's scheduler promotes it and a real Ruby worker runs it:");
  const deadline = Date.now() + 30_000;
  let got: string | undefined;
  while (!got && Date.now() < deadline) {
    got = (await redis.lrange("bridge:received", 0, -1)).find((s) => s.includes(job.get("jid") as string));
    if (!got) await new Promise((res) => setTimeout(res, 200));
  }
  if (!got) throw new Error(`Ruby did not run the job; its log:\n${sidekiq.log()}`);
  const rec = JSON.parse(got) as { args_json: string; job: { retry_count: number; error_class: string } };
  say(`   Ruby received args ${rec.args_json} (retry_count=${rec.job.retry_count}, error_class=${rec.job.error_class})`);
  say(`   identical to what Ruby enqueued: ${rec.args_json === job.raw("args") ? "yes" : "NO"}`);
  say("\nDone. (The client, worker and CLI demos land with issues 3 to 6.)");
} finally {
  await sidekiq.stop();
  redis.disconnect();
  await server?.stop();
  removeFixtures(root, fixtures);
}
