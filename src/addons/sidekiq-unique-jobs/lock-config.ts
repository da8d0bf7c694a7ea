// A job's lock settings as the gem's LockConfig reads them from the payload
// (lock, lock_digest, lock_limit, lock_timeout, lock_ttl, on_conflict…).
import type { JsonValue } from "../../core/wire/json-scan.js";
import { rubyFloatToS } from "../../core/wire/ruby-json.js";
import type { UniqueJobsConfig } from "./config.js";
import { lockDigest } from "./digest.js";

/** The gem's lock classes by the names `lock:` accepts (its config.locks). */
export const LOCK_TYPES: Readonly<Record<string, LockKind>> = {
  around_perform: "while_executing",
  while_busy: "while_executing",
  while_executing: "while_executing",
  while_working: "while_executing",
  while_executing_reject: "while_executing_reject",
  until_executing: "until_executing",
  while_enqueued: "until_executing",
  until_expired: "until_expired",
  until_completed: "until_executed",
  until_executed: "until_executed",
  until_performed: "until_executed",
  until_processed: "until_executed",
  until_and_while_executing: "until_and_while_executing",
  until_successfully_completed: "until_executed",
};

export type LockKind =
  | "while_executing"
  | "while_executing_reject"
  | "until_executing"
  | "until_expired"
  | "until_executed"
  | "until_and_while_executing";

export type Getter = (key: string) => JsonValue | undefined;

export interface LockConfig {
  jid: string;
  className: string;
  queue: string;
  /** `lock` as written (the alias), sent to the scripts as the lock type. */
  type: string;
  kind: LockKind | undefined;
  digest: string;
  limit: number;
  /** lock_timeout in seconds; null means "wait" (nil in Ruby). */
  timeout: number | null;
  pttl: number;
  /** `item["at"].to_s`: the digests score for scheduled jobs, "" otherwise. */
  lockScore: string;
  lockInfo: boolean;
  onClientConflict: string | null;
  onServerConflict: string | null;
  get: Getter;
}

/** Ruby's `to_i` on what JSON can hold. */
export function rubyToI(v: JsonValue | undefined): number {
  if (typeof v === "number") return Math.trunc(v);
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "string") return Number.parseInt(v.trim(), 10) || 0;
  return 0;
}

function rubyToS(v: JsonValue | undefined): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : rubyFloatToS(v);
  return String(v);
}

function strategyName(v: JsonValue | undefined, side: "client" | "server"): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v === "object" && !Array.isArray(v) && typeof v !== "bigint") {
    const x = (v as Record<string, JsonValue>)[side];
    return typeof x === "string" ? x : null;
  }
  return typeof v === "string" ? v : null;
}

/**
 * The job's lock digest: the payload's own (what Ruby computed, with any
 * lock_args filter its class has), else computed as the gem would.
 */
export function digestOf(get: Getter, cfg: UniqueJobsConfig): string {
  const d = get("lock_digest") ?? get("unique_digest");
  if (typeof d === "string" && d !== "") return d;
  const prefix = get("lock_prefix") ?? get("unique_prefix");
  return lockDigest({
    class: String(get("class")),
    queue: String(get("queue")),
    lockArgs: (get("lock_args") ?? get("unique_args") ?? get("args") ?? []) as never,
    ...(get("apartment") !== undefined ? { apartment: get("apartment") as never } : {}),
    lockPrefix: typeof prefix === "string" ? prefix : cfg.lockPrefix,
    algorithm: cfg.digestAlgorithm,
    jsonFloats: cfg.jsonFloats,
    uniqueAcrossQueues: Boolean(get("unique_across_queues")),
    uniqueAcrossWorkers: Boolean(get("unique_across_workers")),
  });
}

export function lockConfig(get: Getter, cfg: UniqueJobsConfig): LockConfig {
  const type = String(get("lock"));
  const limit = get("lock_limit");
  const timeout = get("lock_timeout");
  const ttl = get("lock_ttl") ?? get("lock_expiration");
  const onConflict = get("on_conflict") ?? null;
  return {
    jid: String(get("jid") ?? ""),
    className: String(get("class")),
    queue: String(get("queue")),
    type,
    kind: LOCK_TYPES[type],
    digest: digestOf(get, cfg),
    limit: limit === undefined ? 1 : rubyToI(limit),
    timeout: timeout === undefined ? cfg.lockTimeout : timeout === null ? null : rubyToI(timeout),
    pttl: rubyToI(ttl) * 1000,
    lockScore: rubyToS(get("at")),
    lockInfo: Boolean(get("lock_info") ?? cfg.lockInfo),
    onClientConflict: strategyName(get("on_client_conflict") ?? onConflict, "client"),
    onServerConflict: strategyName(get("on_server_conflict") ?? onConflict, "server"),
    get,
  };
}
