// The iteration state of Sidekiq's IterableJob (Sidekiq 7.3+), as Ruby keeps it
// in the hash `it-<jid>`: `ex` executions, `c` the cursor as JSON, `rt` the
// runtime in float seconds over all executions, and (Sidekiq 8) `cancelled`,
// the epoch seconds of a `Sidekiq::Client#cancel!`. The hash outlives one
// execution (30 days) so an interrupted or retried job resumes at its cursor.
import type { Redis } from "ioredis";
import { releaseRules } from "../wire/release-rules.js";
import { parseJson, type JsonValue } from "../wire/json-scan.js";
import { rubyFloatToS, toRubyJson } from "../wire/ruby-json.js";
import { iterationKey } from "../wire/keys.js";

/** Sidekiq::Job::Iterable::STATE_TTL: kept as long as the job may be retrying. */
export const ITERATION_STATE_TTL = 30 * 24 * 60 * 60;
/** Sidekiq::Job::Iterable::STATE_FLUSH_INTERVAL, seconds: how often the cursor is saved. */
export const ITERATION_STATE_FLUSH_INTERVAL = 5;

/** An `it-<jid>` field that Ruby's `Sidekiq.load_json` refuses; named as the Ruby error. */
export class IterationStateError extends Error {
  constructor(
    override readonly name: "JSON::ParserError" | "TypeError",
    message: string,
  ) {
    super(message);
  }
}

export interface IterationState {
  executions: number;
  cursor: JsonValue;
  /** Seconds, over all executions. */
  runtime: number;
}

/**
 * Ruby's `fetch_previous_iteration_state`: undefined when there is no hash.
 * Like Ruby, a hash without `c` (only `cancelled`: cancelled before it ever
 * ran) or with a `c` that is not JSON throws, as TypeError and
 * JSON::ParserError.
 */
export function decodeIterationState(raw: Record<string, string>): IterationState | undefined {
  if (Object.keys(raw).length === 0) return undefined;
  const c = raw.c;
  if (c === undefined) throw new IterationStateError("TypeError", "no implicit conversion of nil into String");
  let cursor: JsonValue;
  try {
    cursor = parseJson(c);
  } catch (e) {
    throw new IterationStateError(
      "JSON::ParserError",
      `the saved cursor is not JSON (${(e as Error).message}): ${JSON.stringify(c.slice(0, 100))}`,
    );
  }
  return { executions: rubyToI(raw.ex), cursor, runtime: rubyToF(raw.rt) };
}

/** Ruby's String#to_i: the leading integer, 0 when none. */
function rubyToI(s: string | undefined): number {
  const m = /^\s*[+-]?\d+/.exec(s ?? "");
  return m ? parseInt(m[0], 10) : 0;
}

/** Ruby's String#to_f: the leading float, 0 when none. */
function rubyToF(s: string | undefined): number {
  const m = /^\s*[+-]?(\d+(\.\d+)?([eE][+-]?\d+)?)/.exec(s ?? "");
  return m ? parseFloat(m[0]) : 0;
}

/** The fields `flush_state` writes: `rt` stays the Integer 0 until a runtime is added, as in Ruby. */
export function encodeIterationState(s: IterationState, runtimeIsFloat: boolean): Record<string, string> {
  return {
    ex: String(s.executions),
    c: toRubyJson(s.cursor),
    rt: runtimeIsFloat ? rubyFloatToS(s.runtime) : String(Math.round(s.runtime)),
  };
}

/**
 * Ruby's `flush_state`: HSET the state and set the TTL in one MULTI; on
 * Sidekiq 8 the TTL only when none (EXPIRE NX) and the `cancelled` field is
 * read back, which is returned (epoch seconds as a string, or null).
 */
export async function flushIterationState(
  redis: Redis,
  jid: string,
  fields: Record<string, string>,
  version: string,
): Promise<string | null> {
  const key = iterationKey(jid);
  const rules = releaseRules(version).iteration;
  if (!rules.cancellation) {
    await redis.multi().hset(key, fields).expire(key, ITERATION_STATE_TTL).exec();
    return null;
  }
  const tx = redis.multi().hset(key, fields);
  const res = await (rules.expireOnce ? tx.expire(key, ITERATION_STATE_TTL, "NX") : tx.expire(key, ITERATION_STATE_TTL))
    .hget(key, "cancelled")
    .exec();
  const [err, cancelled] = res?.[2] ?? [new Error("MULTI aborted"), null];
  if (err) throw err;
  return (cancelled as string | null) ?? null;
}

/**
 * `Sidekiq::Client#cancel!(jid)` (Sidekiq 8): marks an iterable job cancelled
 * (the first call's epoch seconds win) and returns that mark. The job stops at
 * its next state flush (within 5 seconds), or when it next starts.
 */
export async function cancelIterableJob(redis: Redis, jid: string): Promise<number> {
  const key = iterationKey(jid);
  const res = await redis
    .pipeline()
    .hsetnx(key, "cancelled", Math.floor(Date.now() / 1000))
    .hget(key, "cancelled")
    .expire(key, ITERATION_STATE_TTL, "NX")
    .exec();
  const [err, v] = res?.[1] ?? [new Error("pipeline aborted"), null];
  if (err) throw err;
  return rubyToI((v as string | null | undefined) ?? undefined);
}

/** `Sidekiq::IterableJobQuery::State` (Sidekiq 8.1): a job's saved iteration state, for display. */
export interface IterationProgress {
  jid: string;
  executions: number;
  runtime: number;
  /** The cursor, or its raw text when it is not JSON (as the Web UI shows it). */
  cursor: JsonValue;
  cancelled?: number;
}

/** `Sidekiq::IterableJobQuery.new(jids)`: one pipeline of HGETALL, only jobs that have state. */
export async function iterationProgress(
  redis: Redis,
  jids: readonly string[],
): Promise<Map<string, IterationProgress>> {
  const unique = [...new Set(jids.filter((j) => j !== ""))];
  const out = new Map<string, IterationProgress>();
  if (unique.length === 0) return out;
  const pipe = redis.pipeline();
  for (const jid of unique) pipe.hgetall(iterationKey(jid));
  const res = (await pipe.exec()) ?? [];
  unique.forEach((jid, i) => {
    const [err, raw] = res[i] ?? [];
    if (err || !raw || typeof raw !== "object" || Object.keys(raw).length === 0) return;
    const h = raw as Record<string, string>;
    let cursor: JsonValue = h.c ?? null;
    try {
      if (h.c !== undefined) cursor = parseJson(h.c);
    } catch {
      // shown raw, as Ruby's State#cursor does on JSON::ParserError
    }
    out.set(jid, {
      jid,
      executions: rubyToI(h.ex),
      runtime: rubyToF(h.rt),
      cursor,
      ...(h.cancelled !== undefined ? { cancelled: rubyToI(h.cancelled) } : {}),
    });
  });
  return out;
}
