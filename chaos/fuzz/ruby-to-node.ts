// Ruby -> Node: real Sidekiq writes each generated record (its own bytes) and
// does to them what it has an operation for: a failure through JobRetry, a
// kill, SortedEntry#retry and #add_to_queue, the scheduled poller's move.
// Node does the same to the same bytes and must leave the same records
// (compare.ts says how times, jitter and backtraces are compared). Where Ruby
// has no such operation (timestamp migration both ways, export and import),
// Ruby reads Node's result back through its API: the same arguments, the same
// instants, every other member byte for byte.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { Client } from "../../src/core/client/client.js";
import { entryOf } from "../../src/core/api/sorted-entry.js";
import { killIntoDeadSet } from "../../src/core/api/morgue.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { migrateTimestamps, type TimestampTarget } from "../../src/tools/migration/convert-timestamps.js";
import { exportToFile } from "../../src/tools/migration/dump.js";
import { importFromFile } from "../../src/tools/migration/restore.js";
import { handleFailure } from "../../src/core/server/job-retry.js";
import { ScheduledPoller } from "../../src/core/server/scheduled.js";
import { profileForVersion, type WireProfile } from "../../src/core/wire/dialect.js";
import { JobRecord } from "../../src/core/wire/job-record.js";
import { releaseRules } from "../../src/core/wire/release-rules.js";
import { PAYLOAD_TIME_FIELDS } from "../../src/core/wire/timestamps.js";
import { compareRecords, instantOf, scoreProblem, type Window } from "./compare.js";
import { caseText, type FuzzCase } from "./generator.js";
import { oracle, type FuzzRig } from "./rig.js";
import { show, type Mismatch } from "./report.js";

type Zset = Array<[string, string]>;
type Queues = Array<[string, string[]]>;
interface Clocked extends Window {
  error?: string;
}
interface RubyWrite {
  bytes: string;
  fail: Clocked & { retry: Zset; dead: Zset; raised: string | null };
  kill: Clocked & { dead: Zset };
  retry: Clocked & { queues: Queues; retry: Zset };
  add_to_queue: Clocked & { queues: Queues; retry: Zset };
  promote: Clocked & { queues: Queues; schedule: Zset };
}

export interface RubyView {
  value: string;
  jid?: string;
  args?: unknown;
  display_class?: string;
  display_args?: unknown;
  created_at?: [number, number] | null;
  enqueued_at?: [number, number] | null;
  failed_at?: [number, number] | null;
  item?: unknown;
  score?: string;
  error?: string;
}

/** The queue a failure happens on, as the processor passes it to JobRetry. */
const FAILED_ON = "fuzz-failed-on";
/** A score in the past, unique enough for one entry at a time. */
const PAST_SCORE = "1600000000.5";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const nowWindow = async <T>(f: () => Promise<T>): Promise<[T | { error: string }, Window]> => {
  const t0 = Date.now() / 1000;
  let r: T | { error: string };
  try {
    r = await f();
  } catch (e) {
    r = { error: `${(e as Error).name}: ${(e as Error).message.slice(0, 200)}` };
  }
  return [r, { t0, t1: Date.now() / 1000 }];
};

async function zsetOf(redis: Redis, key: string): Promise<Zset> {
  const flat = await redis.zrange(key, 0, -1, "WITHSCORES");
  const out: Zset = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
}

async function drainQueues(redis: Redis): Promise<Queues> {
  const names = (await redis.smembers("queues")).sort();
  const out: Queues = [];
  for (const q of names) out.push([q, await redis.lrange(`queue:${q}`, 0, -1)]);
  await redis.del("queues", ...names.map((q) => `queue:${q}`));
  return out;
}

/** Node's side of the same operations, on the `work` database (empty between operations). */
class NodeOps {
  readonly api: SidekiqApi;
  readonly client: Client;
  readonly poller: ScheduledPoller;
  constructor(
    readonly redis: Redis,
    readonly profile: WireProfile,
  ) {
    this.client = new Client({ redis, dialect: profile.version, validate: false, strictArgs: "warn", warn: () => {} });
    this.api = new SidekiqApi({ redis, apiVersion: profile.version, client: this.client });
    this.poller = new ScheduledPoller({
      redis,
      client: this.client,
      profile: () => profile,
      retry: () => ({ profile, onHandlerError: () => {} }),
      logger: quiet,
    });
  }

  async fail(bytes: string) {
    const error = new Error("fuzz failure");
    error.name = "ArgumentError";
    const [r, w] = await nowWindow(() =>
      handleFailure(this.redis, JobRecord.parse(bytes), error, {
        queue: FAILED_ON,
        config: { profile: this.profile, onHandlerError: () => {} },
      }),
    );
    const out = { retry: await zsetOf(this.redis, "retry"), dead: await zsetOf(this.redis, "dead"), r, w };
    await this.redis.del("retry", "dead");
    return out;
  }

  async kill(bytes: string) {
    const [, w] = await nowWindow(() => killIntoDeadSet(this.api, {}, bytes));
    const dead = await zsetOf(this.redis, "dead");
    await this.redis.del("dead");
    return { dead, w };
  }

  async requeue(bytes: string, action: "retry" | "add_to_queue") {
    await this.redis.zadd("retry", PAST_SCORE, bytes);
    const entry = entryOf("retry", bytes, PAST_SCORE);
    const [r, w] = await nowWindow(() =>
      action === "retry" ? this.api.retries.retry(entry) : this.api.retries.addToQueue(entry),
    );
    const out = { queues: await drainQueues(this.redis), retry: await zsetOf(this.redis, "retry"), r, w };
    await this.redis.del("retry");
    return out;
  }

  async promote(bytes: string) {
    await this.redis.zadd("schedule", PAST_SCORE, bytes);
    const [r, w] = await nowWindow(() => this.poller.enqueue());
    const out = { queues: await drainQueues(this.redis), schedule: await zsetOf(this.redis, "schedule"), r, w };
    await this.redis.del("schedule");
    return out;
  }

  async close(): Promise<void> {
    await this.client.close();
    await this.api.close?.();
  }
}

function sameQueues(
  what: string,
  input: string,
  ruby: { queues: Queues; error?: string } & Window,
  node: { queues: Queues; r: unknown; w: Window },
  unit: "seconds" | "millis",
): string[] {
  const problems: string[] = [];
  const nodeError = (node.r as { error?: string } | undefined)?.error;
  if (Boolean(ruby.error) !== Boolean(nodeError))
    problems.push(`${what}: ruby ${ruby.error ?? "pushed"}, node ${nodeError ?? "pushed"}`);
  const rq = ruby.queues.map(([q, l]) => `${q}×${l.length}`).join(" ");
  const nq = node.queues.map(([q, l]) => `${q}×${l.length}`).join(" ");
  if (rq !== nq) return [...problems, `${what}: ruby pushed to [${rq}], node to [${nq}]`];
  ruby.queues.forEach(([q, list], i) =>
    list.forEach((member, j) => {
      for (const p of compareRecords({
        input,
        ruby: member,
        rubyWindow: ruby,
        node: node.queues[i]![1][j]!,
        nodeWindow: node.w,
        unit,
      }))
        problems.push(`${what} (queue ${q}): ${p}`);
    }),
  );
  return problems;
}

/** The retry score's bounds past the clock: the default delay, plus the release's largest jitter. */
function retryDelayBounds(profile: WireProfile, count: number): [number, number] {
  const base = count ** 4 + 15;
  const jitter = releaseRules(profile).retry.jitter;
  const max =
    jitter === "rand(10*(count+1))"
      ? 10 * (count + 1) - 1
      : jitter === "rand(10)*(count+1)"
        ? 9 * (count + 1)
        : 29 * (count + 1);
  return [base, base + max];
}

function compareFailure(
  profile: WireProfile,
  bytes: string,
  ruby: RubyWrite["fail"],
  node: Awaited<ReturnType<NodeOps["fail"]>>,
): string[] {
  const unit = profile.payloadTime === "millis" ? "millis" : "seconds";
  const problems: string[] = [];
  if (ruby.error) problems.push(`failure: Ruby raised ${ruby.error}`);
  const where = (r: { retry: Zset; dead: Zset }) => (r.retry.length ? "retry" : r.dead.length ? "dead" : "nowhere");
  if (where(ruby) !== where(node)) return [`failure: ruby put the job in ${where(ruby)}, node in ${where(node)}`];
  for (const set of ["retry", "dead"] as const) {
    const [rm, rs] = ruby[set][0] ?? [];
    const [nm, ns] = node[set][0] ?? [];
    if (rm === undefined || nm === undefined) continue;
    for (const p of compareRecords({ input: bytes, ruby: rm, rubyWindow: ruby, node: nm, nodeWindow: node.w, unit }))
      problems.push(`failure (${set}): ${p}`);
    let bounds: [number, number] = [0, 0];
    if (set === "retry") {
      const count = Number(JobRecord.parse(rm).raw("retry_count"));
      bounds = retryDelayBounds(profile, count);
    }
    for (const [who, score, w] of [
      ["Ruby's", rs!, ruby],
      ["Node's", ns!, node.w],
    ] as const) {
      const p = scoreProblem(`${who} ${set}`, score, w, bounds[0], bounds[1]);
      if (p) problems.push(`failure: ${p}`);
    }
  }
  return problems;
}

/** One batch of Ruby-written records through Ruby's and Node's operations. */
async function operations(
  rig: FuzzRig,
  profile: WireProfile,
  cases: FuzzCase[],
): Promise<{ mismatches: Mismatch[]; bytes: string[] }> {
  const unit = profile.payloadTime === "millis" ? "millis" : "seconds";
  await rig.redis("work").flushdb();
  const [writes] = await oracle<[RubyWrite[]]>(rig, [
    { op: "write", queue: FAILED_ON, score: PAST_SCORE, cases: cases.map(caseText) },
  ]);
  const node = new NodeOps(rig.redis("work"), profile);
  const mismatches: Mismatch[] = [];
  try {
    for (let i = 0; i < cases.length; i++) {
      const w = writes[i]!;
      const b = w.bytes;
      const problems: string[] = [];
      problems.push(...compareFailure(profile, b, w.fail, await node.fail(b)));
      const k = await node.kill(b);
      if (w.kill.dead[0]?.[0] !== b || k.dead[0]?.[0] !== b || k.dead.length !== 1)
        problems.push(
          `kill: the dead set holds ruby ${w.kill.dead[0]?.[0]?.slice(0, 200)}, node ${k.dead[0]?.[0]?.slice(0, 200)}`,
        );
      else {
        for (const [who, score, win] of [
          ["Ruby's", w.kill.dead[0]![1], w.kill],
          ["Node's", k.dead[0]![1], k.w],
        ] as const) {
          const p = scoreProblem(`${who} dead`, score, win, 0, 0);
          if (p) problems.push(`kill: ${p}`);
        }
      }
      for (const action of ["retry", "add_to_queue"] as const) {
        const n = await node.requeue(b, action);
        problems.push(...sameQueues(action, b, w[action], n, unit));
        if ((w[action].retry.length === 0) !== (n.retry.length === 0))
          problems.push(`${action}: the retry set keeps ruby ${w[action].retry.length}, node ${n.retry.length}`);
      }
      const p = await node.promote(b);
      problems.push(...sameQueues("promotion", b, w.promote, p, unit));
      if (w.promote.schedule.length !== p.schedule.length)
        problems.push(`promotion: the schedule keeps ruby ${w.promote.schedule.length}, node ${p.schedule.length}`);
      if (problems.length) mismatches.push({ case: cases[i]!, direction: "ruby-to-node", problems });
    }
  } finally {
    await node.close();
  }
  return { mismatches, bytes: writes.map((w) => w.bytes) };
}

const MIGRATION_QUEUES = { original: "fuzz-original", there: "fuzz-migrated", back: "fuzz-round-trip" } as const;

/** The dialect a release's fleet writes, and the other unit's. */
function dialects(profile: WireProfile): [TimestampTarget, TimestampTarget] {
  const own = Number(profile.version.split(".")[0]) as TimestampTarget;
  return [own, own === 8 ? 7 : 8];
}

/** Ruby's reading of a rewritten record against its reading of the original. */
function compareReading(
  what: string,
  original: string,
  before: RubyView,
  after: RubyView | undefined,
  exactValue: boolean,
): string[] {
  if (!after) return [`${what}: Ruby does not find the job`];
  if (after.error) return [`${what}: Ruby's API raised ${after.error}`];
  const problems: string[] = [];
  for (const k of ["args", "display_class", "display_args"] as const)
    if (JSON.stringify(before[k]) !== JSON.stringify(after[k]))
      problems.push(`${what}: Ruby reads ${k} ${show(after[k])}, the original ${show(before[k])}`);
  if (exactValue) {
    if (after.value !== original) problems.push(`${what}: the bytes changed:\n  ${original}\n  ${after.value}`);
    return problems;
  }
  const o = JobRecord.parse(original);
  const a = JobRecord.parse(after.value);
  if (o.keys().join(",") !== a.keys().join(","))
    problems.push(`${what}: keys ${a.keys().join(",")}, originally ${o.keys().join(",")}`);
  for (const key of o.keys()) {
    if ((PAYLOAD_TIME_FIELDS as readonly string[]).includes(key)) continue;
    if (o.raw(key) !== a.raw(key))
      problems.push(`${what}: ${key} changed from ${o.raw(key)?.slice(0, 200)} to ${a.raw(key)?.slice(0, 200)}`);
  }
  // The instants Ruby reads must be the original's (a Float lexeme is seconds, an Integer ms).
  const fields = ["created_at", "enqueued_at", ...(after.failed_at !== undefined ? ["failed_at"] : [])] as const;
  for (const f of fields) {
    const raw = o.raw(f);
    const seen = after[f as "created_at"];
    if (raw === undefined || !seen) continue;
    const got = seen[0] + seen[1] / 1e9;
    if (Math.abs(got - instantOf(raw)) > 0.001)
      problems.push(`${what}: Ruby reads ${f} as ${got}, the original ${raw} is ${instantOf(raw)}`);
  }
  return problems;
}

/** Timestamp migration both ways and export/import of one batch, read back by Ruby. */
async function rewrites(rig: FuzzRig, profile: WireProfile, cases: FuzzCase[], bytes: string[]): Promise<Mismatch[]> {
  const work = rig.redis("work");
  const other = rig.redis("other");
  await work.flushdb();
  await other.flushdb();
  const [own, foreign] = dialects(profile);
  const pipe = work.pipeline();
  for (const q of Object.values(MIGRATION_QUEUES)) pipe.sadd("queues", q).rpush(`queue:${q}`, ...bytes);
  await pipe.exec();
  await migrateTimestamps(work, { to: own, queues: [MIGRATION_QUEUES.there], sets: [] });
  await migrateTimestamps(work, { to: foreign, queues: [MIGRATION_QUEUES.back], sets: [] });
  await migrateTimestamps(work, { to: own, queues: [MIGRATION_QUEUES.back], sets: [] });

  // Export the lot (the queues, and each record in retry, schedule and dead too) and import it elsewhere.
  const sets = work.pipeline();
  bytes.forEach((b, i) => {
    const score = (1_700_000_000 + i + 0.25).toFixed(2);
    sets.zadd("retry", score, b).zadd("schedule", score, b).zadd("dead", score, b);
  });
  await sets.exec();
  const dir = mkdtempSync(join(tmpdir(), "fuzz-export-"));
  try {
    await exportToFile(work, join(dir, "dump.sbx"));
    await importFromFile(other, join(dir, "dump.sbx"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const [views, imported] = await oracle<[Record<string, RubyView[]>, Record<string, RubyView[]>]>(rig, [
    { op: "views", queues: Object.values(MIGRATION_QUEUES) },
    {
      op: "views",
      url: rig.rubyUrl("other"),
      queues: [MIGRATION_QUEUES.original],
      sets: ["retry", "schedule", "dead"],
    },
  ]);
  const byJid = (list: RubyView[] | undefined) =>
    new Map((list ?? []).map((v) => [JobRecord.parse(v.value).getString("jid"), v]));
  const there = byJid(views[`queue:${MIGRATION_QUEUES.there}`]);
  const back = byJid(views[`queue:${MIGRATION_QUEUES.back}`]);
  const imports = (["queue:" + MIGRATION_QUEUES.original, "retry", "schedule", "dead"] as const).map(
    (k) => [k, byJid(imported[k])] as const,
  );
  const originals = views[`queue:${MIGRATION_QUEUES.original}`] ?? [];
  const mismatches: Mismatch[] = [];
  cases.forEach((c, i) => {
    const b = bytes[i]!;
    const jid = JobRecord.parse(b).getString("jid");
    const before = originals.find((v) => v.value === b);
    const problems: string[] = [];
    if (!before) problems.push("Ruby does not find the original in its queue");
    else {
      problems.push(...compareReading(`timestamps to ${own}`, b, before, there.get(jid), false));
      problems.push(...compareReading(`timestamps to ${foreign} and back`, b, before, back.get(jid), false));
      for (const [k, m] of imports) {
        const v = m.get(jid);
        problems.push(...compareReading(`export/import (${k})`, b, before, v, true));
        if (k !== "queue:fuzz-original" && v && v.score !== (1_700_000_000 + i + 0.25).toFixed(2))
          problems.push(`export/import (${k}): score ${v.score}`);
      }
    }
    if (problems.length) mismatches.push({ case: c, direction: "ruby-to-node", problems });
  });
  return mismatches;
}

/** Ruby writes the batch; both sides operate; Ruby reads Node's rewrites back. */
export async function rubyToNode(rig: FuzzRig, cases: FuzzCase[]): Promise<Mismatch[]> {
  const profile = profileForVersion(rig.target.version);
  const { mismatches, bytes } = await operations(rig, profile, cases);
  return [...mismatches, ...(await rewrites(rig, profile, cases, bytes))];
}
