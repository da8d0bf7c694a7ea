// Sidekiq's Client#atomic_push: the last step of every push, in one place. A
// job for a queue is stamped with enqueued_at (the push's time, in the
// dialect's unit) and encoded, and the jobs go out as SADD queues plus one
// LPUSH per queue; a scheduled job loses `at` (its ZADD score) and, from
// 7.1.2, enqueued_at. Client#push (one job, in its tick's pipeline:
// push-batch.ts), pushBulk (push-bulk.ts: through a template when no
// middleware runs) and the general path they fall back to end here;
// pushRecord stamps the stored record with the same enqueuedAtNow. Under the
// testing entry recordPush takes the jobs instead, encoded by the same steps.
import type { Redis } from "ioredis";
import type { RecordKind, WireProfile } from "../wire/dialect.js";
import { parseJson } from "../wire/json-scan.js";
import { QUEUES_KEY, queueKey, SCHEDULE_KEY } from "../wire/keys.js";
import { releaseRules } from "../wire/release-rules.js";
import { rubyFloatToS, toRubyJson, type RubyFloat, type RubyJsonValue } from "../wire/ruby-json.js";
import { encodePayloadTime, nowMs } from "../wire/timestamps.js";
import { assertValidRecord } from "../wire/validate.js";
import { execRetryingOnce } from "../redis/retry-once.js";
import type { PreparedPush } from "./client-types.js";
import { fillTemplate, schemaKind, type BulkTemplate, type JobHash } from "./normalize.js";
import type { WriteDeadlines } from "./bounded-write.js";
import { pipeQueuePushes, pushOnNextTick } from "./push-batch.js";

/** enqueued_at for a push made now, in the profile's unit. */
export function enqueuedAtNow(profile: WireProfile): RubyFloat | number {
  return encodePayloadTime(nowMs(), profile);
}

/** The payload as Ruby's JSON spells it, checked against the dialect's schema when `validate`. */
function encode(profile: WireProfile, payload: JobHash, kind: RecordKind, validate: boolean): string {
  const json = toRubyJson(payload);
  if (validate) assertValidRecord(profile.dialect, schemaKind(payload, kind), parseJson(json));
  return json;
}

/** Stamps a job for a queue with `enqueuedAt` and encodes it. */
function stampAndEncode(profile: WireProfile, p: JobHash, enqueuedAt: RubyFloat | number, validate: boolean): string {
  p.enqueued_at = enqueuedAt;
  return encode(profile, p, "job", validate);
}

/** A scheduled job as its ZADD member: without `at` (the score) and, where the release drops it, enqueued_at. */
function encodeScheduled(profile: WireProfile, p: JobHash, dropEnqueued: boolean, validate: boolean): string {
  const { at: _at, ...rest } = p;
  if (dropEnqueued) delete rest.enqueued_at;
  return encode(profile, rest, "scheduled", validate);
}

/**
 * One job for a queue, in the pipeline of this tick's pushes to `redis`
 * (push-batch.ts), within the bound of `deadlines`; stamped again if a
 * failover makes it go out twice.
 */
export function pushOne(
  redis: Redis,
  deadlines: WriteDeadlines,
  profile: WireProfile,
  p: JobHash,
  validate: boolean,
): Promise<void> {
  return pushOnNextTick(redis, deadlines, String(p.queue), () =>
    stampAndEncode(profile, p, enqueuedAtNow(profile), validate),
  );
}

/**
 * Sidekiq's raw_push: the jobs (all scheduled, or all for queues) in one
 * pipeline; retried once after reconnecting on READONLY/NOREPLICAS/UNBLOCKED.
 */
export async function atomicPush(
  redis: Redis,
  profile: WireProfile,
  payloads: JobHash[],
  validate: boolean,
): Promise<void> {
  const build = () => {
    const pipe = redis.pipeline();
    if (payloads[0]!.at !== undefined) {
      const dropEnqueued = releaseRules(profile).client.scheduledDropsEnqueuedAt;
      const pairs: string[] = [];
      for (const p of payloads)
        pairs.push(rubyFloatToS(Number(p.at)), encodeScheduled(profile, p, dropEnqueued, validate));
      pipe.zadd(SCHEDULE_KEY, ...pairs);
    } else {
      const enqueuedAt = enqueuedAtNow(profile);
      const byQueue = new Map<string, string[]>();
      for (const p of payloads) {
        const q = String(p.queue);
        let list = byQueue.get(q);
        if (!list) byQueue.set(q, (list = []));
        list.push(stampAndEncode(profile, p, enqueuedAt, validate));
      }
      pipeQueuePushes(pipe, byQueue);
    }
    return pipe;
  };
  await execRetryingOnce(redis, build, "push");
}

/**
 * What atomicPush would write for `payloads`, handed to the testing entry's
 * recorder instead of Redis: the same stamp and encoding, `at` kept beside
 * each scheduled job as its score would be.
 */
export function recordPush(
  recorder: PushRecorder,
  profile: WireProfile,
  payloads: JobHash[],
  validate: boolean,
  appOf?: (payload: JobHash) => string | undefined,
): Promise<void> {
  const pushes: RecordedPush[] = [];
  const app = (p: JobHash) => {
    const name = appOf?.(p);
    return name === undefined ? {} : { app: name };
  };
  if (payloads[0]!.at !== undefined) {
    const dropEnqueued = releaseRules(profile).client.scheduledDropsEnqueuedAt;
    for (const p of payloads) {
      const json = encodeScheduled(profile, p, dropEnqueued, validate);
      pushes.push({ queue: String(p.queue), className: String(p.class), json, at: p.at!, ...app(p) });
    }
  } else {
    const enqueuedAt = enqueuedAtNow(profile);
    for (const p of payloads)
      pushes.push({
        queue: String(p.queue),
        className: String(p.class),
        json: stampAndEncode(profile, p, enqueuedAt, validate),
        ...app(p),
      });
  }
  return recorder.record(pushes);
}

/**
 * atomicPush of a bulk without middleware, from its template: what
 * atomicPush writes for the same jobs, byte for byte. Returns false, having
 * sent nothing, when a job's args, jid or `at` cannot be encoded (the caller
 * then takes atomicPush, which names the error as it always has).
 */
export async function atomicPushTemplate(
  redis: Redis,
  profile: WireProfile,
  t: BulkTemplate,
  jobArgs: RubyJsonValue[][],
  jids: RubyJsonValue[],
  explicitJid: boolean,
  ats: number[] | undefined,
  validate: boolean,
): Promise<boolean> {
  const n = jobArgs.length;
  const argTexts: string[] = new Array<string>(n);
  const jidTexts: string[] = new Array<string>(n);
  const scores: string[] = [];
  try {
    for (let i = 0; i < n; i++) {
      if (ats !== undefined) scores.push(rubyFloatToS(Number(ats[i])));
      argTexts[i] = toRubyJson(jobArgs[i]!);
      // A generated jid is 24 hex digits: its JSON is itself in quotes.
      jidTexts[i] = explicitJid ? toRubyJson(jids[i]!) : `"${String(jids[i])}"`;
    }
  } catch {
    return false;
  }
  const slots = t.tpl.slots;
  const iArgs = slots.indexOf("args");
  const iJid = slots.indexOf("jid");
  const iEnq = slots.indexOf("enqueued_at");
  const build = () => {
    const pipe = redis.pipeline();
    const values = slots.map(() => "");
    if (iEnq >= 0) values[iEnq] = toRubyJson(enqueuedAtNow(profile));
    const list: string[] = [];
    for (let i = 0; i < n; i++) {
      values[iArgs] = argTexts[i]!;
      values[iJid] = jidTexts[i]!;
      const json = fillTemplate(t.tpl, values);
      if (validate) assertValidRecord(profile.dialect, t.kind, parseJson(json));
      if (t.scheduled) list.push(scores[i]!, json);
      else list.push(json);
    }
    if (t.scheduled) pipe.zadd(SCHEDULE_KEY, ...list);
    else pipe.sadd(QUEUES_KEY, t.queue).lpush(queueKey(t.queue), ...list);
    return pipe;
  };
  await execRetryingOnce(redis, build, "push bulk");
  return true;
}

/** A prepared record (Client#prepareRecord) pushed on its own: SADD queues, then LPUSH. */
export async function pushPrepared(p: PreparedPush): Promise<void> {
  await execRetryingOnce(
    p.redis,
    () => p.redis.pipeline().sadd(QUEUES_KEY, p.queue).lpush(queueKey(p.queue), p.json),
    "push",
  );
}

// The seam of the testing entry (sidekiq-bridge/testing), Sidekiq's
// TestingClient: a client made while a recorder is installed opens no
// connection, reads no fleet, and hands each push to the recorder where
// Redis would get it, encoded here exactly as it would be written. The check
// is one field the client sets when it is made, so the real push path pays
// nothing for the seam. It lives in this module, the end of every push, so
// that a program that never imports the testing entry loads nothing more.

/** One job as the client would write it: the queue, the class, the payload's text and, for a scheduled job, its `at`. */
export interface RecordedPush {
  queue: string;
  className: string;
  /** The payload as LPUSH or ZADD would carry it. */
  json: string;
  /** Epoch seconds: the ZADD score of a scheduled job (not in `json`, as in Redis). */
  at?: RubyJsonValue;
  /** The app whose contract the pushing client's check gave the job to (not in `json`: Ruby writes no app). */
  app?: string;
}

/** Where pushes go instead of Redis: the testing entry's fake or inline mode. */
export interface PushRecorder {
  record(pushes: RecordedPush[]): Promise<void>;
}

let installed: PushRecorder | undefined;

/** Installs (or, with undefined, removes) the recorder that clients made from now on push to. */
export function installPushRecorder(recorder: PushRecorder | undefined): void {
  installed = recorder;
}

/** The recorder a client made now pushes to, if the testing entry is loaded. */
export function installedPushRecorder(): PushRecorder | undefined {
  return installed;
}
