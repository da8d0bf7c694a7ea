// The release sweep's failure cases: each job is failed once by Node's
// JobRetry and once by the release's own (ruby-fixtures/lib/sweep.rb), and
// both must send it to the same place with the same delay. Each case sits on
// one or more boundaries of src/core/wire/release-rules.ts.
import type { Redis } from "ioredis";
import { it } from "vitest";
import { handleFailure, type RetryOutcome } from "../../src/core/server/job-retry.js";
import type { DeathHandler, HandlerOptions } from "../../src/core/server/types.js";
import { JobRecord, profileForVersion, releaseRules } from "../../src/core/wire/index.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { Client } from "../../src/core/client/client.js";
import { SidekiqArgumentError } from "../../src/core/client/errors.js";
import { ScheduledPoller } from "../../src/core/server/scheduled.js";
import { SWEEP_CHECKS, sweepChecksFor, type SweepCheckId } from "./support-matrix.js";

export interface FailureCase {
  name: string;
  /** The job, in the release's time unit; `jid` differs between the two sides. */
  job: Record<string, unknown>;
  handler?: HandlerOptions;
}

export interface FailureSeen {
  outcome: RetryOutcome | "discarded";
  /** Seconds from the failure to the retry, when retried. */
  delay: number | null;
  /** The death handlers ran, and the job they got had `discarded_at`. */
  death: boolean;
  discardedAt: boolean;
}

/** The cases, with times in `version`'s unit, `ago` seconds before now. */
export function failureCases(version: string): FailureCase[] {
  const millis = releaseRules(version).payload.time === "millis";
  const at = (ago: number) => (millis ? Math.round(Date.now() - ago * 1000) : Date.now() / 1000 - ago);
  const base = (className: string, extra: Record<string, unknown>) => ({
    class: className,
    queue: "sweep-fail",
    args: [1],
    created_at: at(0),
    ...extra,
  });
  return [
    // retry.jitter (6.2.2 / 8.0.0) and retry.retryAt: the 5th failure's largest jitter.
    { name: "jitter", job: base("SweepPlainJob", { retry: 10, retry_count: 3, failed_at: at(60), backtrace: true }) },
    // retry.retryFor (7.1.3): the deadline passed, the count is not used up.
    {
      name: "retryForPast",
      job: base("SweepPlainJob", { retry: 25, retry_count: 0, failed_at: at(3600), retry_for: 60 }),
    },
    // retry.retryFor (8.1.0): the count is used up, the deadline is an hour away.
    {
      name: "retryForCountUsed",
      job: base("SweepPlainJob", { retry: 1, retry_count: 0, failed_at: at(0), retry_for: 3600 }),
    },
    // retry.exhaustedDiscard (7.2.0), discardRunsDeathHandlers (8.0.7), discardedAt (8.0.8).
    {
      name: "exhaustedDiscard",
      job: base("SweepDiscardJob", { retry: 0 }),
      handler: { retriesExhausted: () => "discard" },
    },
    // retry.retryIn (6.5.2: a Float falls back to the default; 7.0.7: truncated).
    { name: "floatDelay", job: base("SweepFloatDelayJob", { retry: 5 }), handler: { retryIn: () => 30.7 } },
    // retry.retryIn (6.5.2: :discard drops the job), discardRunsDeathHandlers, discardedAt.
    { name: "discardIn", job: base("SweepDiscardInJob", { retry: 5 }), handler: { retryIn: () => "discard" } },
  ];
}

export const payloadOf = (c: FailureCase, jid: string): string => JSON.stringify({ ...c.job, jid });

async function zscoreByJid(redis: Redis, key: string, jid: string): Promise<number | undefined> {
  const flat = await redis.zrange(key, 0, -1, "WITHSCORES");
  for (let i = 0; i < flat.length; i += 2) if (flat[i]!.includes(`"jid":"${jid}"`)) return Number(flat[i + 1]);
  return undefined;
}

/** Fails each case once with Node's JobRetry (the largest jitter, as the Ruby side stubs it). */
export async function nodeFailures(
  redis: Redis,
  version: string,
  cases: readonly FailureCase[],
  jidOf: (c: FailureCase) => string,
): Promise<Record<string, FailureSeen>> {
  const deaths: Array<{ jid: string; discardedAt: boolean }> = [];
  const onDeath: DeathHandler = (job) => {
    deaths.push({ jid: job.getString("jid")!, discardedAt: job.raw("discarded_at") !== undefined });
  };
  const out: Record<string, FailureSeen> = {};
  for (const c of cases) {
    const jid = jidOf(c);
    const now = Date.now();
    const err = new Error("sweep failure");
    err.name = "ArgumentError";
    const r = await handleFailure(redis, JobRecord.parse(payloadOf(c, jid)), err, {
      queue: "sweep-fail",
      handler: c.handler,
      now,
      config: {
        profile: profileForVersion(version),
        random: () => 0.999999,
        deathHandlers: [onDeath],
        onHandlerError: () => {},
      },
    });
    const score = await zscoreByJid(redis, "retry", jid);
    const inDead = (await zscoreByJid(redis, "dead", jid)) !== undefined;
    const death = deaths.find((d) => d.jid === jid);
    out[c.name] = {
      outcome: score !== undefined ? "retry" : inDead ? "dead" : "discarded",
      delay: score === undefined ? null : score - now / 1000,
      death: death !== undefined,
      discardedAt: death?.discardedAt ?? false,
    };
    if (r.outcome === "retry" && score === undefined) throw new Error(`${c.name}: Node said retry, nothing in retry`);
  }
  return out;
}

/** What `Sweep.rules_view` reports, Node's side and Ruby's. */
export interface RulesView {
  cleanupLock: boolean;
  latencyNoEnqueued: number;
  /** The wall clock (epoch seconds) read just before and just after the latency was taken. */
  latencyWindow: [number, number];
  /** Ruby's scheduled push with a caller's enqueued_at, then Node's: is it kept? */
  scheduledKeepsEnqueuedAt: [boolean, boolean];
  strictArgs: "pushed" | "raised";
  pollInterval12: number;
}

/**
 * Node's side of the rules view; leaves a job with only `created_at` (30 s
 * ago) in `sweep-noenq` and a scheduled push with a caller's `enqueued_at`
 * for Ruby. Returns the view and that push's jid.
 */
export async function nodeRulesView(
  redis: Redis,
  url: string,
  version: string,
): Promise<{ view: Omit<RulesView, "scheduledKeepsEnqueuedAt">; laterJid: string }> {
  const millis = releaseRules(version).payload.time === "millis";
  const created = millis ? Date.now() - 30_000 : Date.now() / 1000 - 30;
  const job = { class: "RecordJob", queue: "sweep-noenq", jid: "noenq", args: [], created_at: created };
  await redis.sadd("queues", "sweep-noenq");
  await redis.lpush("queue:sweep-noenq", JSON.stringify(job));
  const api = new SidekiqApi({ redis: url, apiVersion: version });
  // validate: false: the v7 schema of a scheduled entry (schema/, from 7.3.2)
  // forbids enqueued_at, which 7.0.0-7.1.1 keep when the caller gives one.
  const c = new Client({ redis: url, dialect: version, warn: () => {}, validate: false });
  try {
    await redis.del("process_cleanup");
    await api.processes.cleanup();
    const cleanupLock = (await redis.exists("process_cleanup")) === 1;
    await redis.del("process_cleanup");
    const laterJid = (await c.push({
      class: "RecordJob",
      queue: "sweep-later",
      args: [1],
      at: Date.now() / 1000 + 600,
      enqueued_at: 1_700_000_000.0,
    }))!;
    const strictArgs = await c
      .job("RecordJob", { queue: "sweep-strict" })
      .performAsync(new Date(0) as never)
      .then(
        () => "pushed" as const,
        (e: unknown) => {
          if (e instanceof SidekiqArgumentError) return "raised" as const;
          throw e;
        },
      );
    const poller = new ScheduledPoller({
      redis: { scard: async () => 12 } as unknown as Redis,
      client: c,
      profile: () => profileForVersion(version),
      retry: () => ({ profile: profileForVersion(version) }),
      logger: { warn: () => {}, error: () => {} } as never,
      random: () => 0.5,
      averageScheduledPollInterval: 5,
    });
    const before = api.now() / 1000;
    const latencyNoEnqueued = await api.queue("sweep-noenq").latency();
    const latencyWindow: [number, number] = [before, api.now() / 1000];
    return {
      view: {
        cleanupLock,
        latencyNoEnqueued,
        latencyWindow,
        strictArgs,
        pollInterval12: await poller.randomPollInterval(),
      },
      laterJid,
    };
  } finally {
    await c.close();
    await api.close();
  }
}

/** What `Sweep.heartbeat_view` reports: the Node process (tagged) beside this release's own. */
export interface HeartbeatView {
  node: Record<string, unknown>;
  ruby: Record<string, unknown>;
  /** The process hash's fields and the keys of its `info`, sorted. */
  nodeRaw: { fields: string[]; info: string[] };
  rubyRaw: { fields: string[]; info: string[] };
  /** The jids WorkSet shows. */
  work: string[];
  busy: number;
  body: string;
  /** What the release's bin/sidekiqmon printed for `processes`. */
  sidekiqmon: string;
}

/**
 * The lines bin/sidekiqmon prints for one process: its identity and tags,
 * then `Started:`, `Threads: <concurrency> (<busy> busy)`, `Queues:` (and
 * from 8.0, `Version:` when it differs from the monitor's own); undefined
 * when the process is not listed.
 */
export function sidekiqmonBlock(out: string, identity: string): string[] | undefined {
  const lines = out.split("\n");
  const at = lines.findIndex((l) => l === identity || l.startsWith(`${identity} `));
  if (at < 0) return undefined;
  const end = lines.findIndex((l, i) => i > at && l.trim() === "");
  return lines.slice(at, end < 0 ? undefined : end).map((l) => l.trimEnd());
}

/**
 * `it` for a check of docs/SUPPORT.md's table, titled from
 * support-matrix.ts, declared only on the releases the check applies to
 * (not skipped elsewhere: CI counts a skipped test as a failure), and
 * recorded as passed on `version` when its body ends without an error.
 */
export function sweepIt(
  record: (release: string, key: string) => void,
  version: string,
  id: SweepCheckId,
  fn: () => Promise<void>,
): void {
  if (!sweepChecksFor(version).includes(id)) return;
  it(SWEEP_CHECKS[id].title, async () => {
    await fn();
    record(version, id);
  });
}

/**
 * Whether two latencies of the same job, each taken between two clock
 * readings, agree: both 0 (a rule that gives none), or the times they put the
 * job at (reading minus latency) overlap, give or take a millisecond of
 * rounding. Read at different moments, the latencies themselves differ by
 * however long lay between the two reads.
 */
export function sameLatency(a: Pick<RulesView, "latencyNoEnqueued" | "latencyWindow">, b: typeof a): boolean {
  if (a.latencyNoEnqueued === 0 || b.latencyNoEnqueued === 0) return a.latencyNoEnqueued === b.latencyNoEnqueued;
  const span = (v: typeof a): [number, number] => [
    v.latencyWindow[0] - v.latencyNoEnqueued - 0.002,
    v.latencyWindow[1] - v.latencyNoEnqueued + 0.002,
  ];
  const [a0, a1] = span(a);
  const [b0, b1] = span(b);
  return a0 <= b1 && b0 <= a1;
}
