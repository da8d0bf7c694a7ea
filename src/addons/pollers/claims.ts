// Recoverable claims for the add-on pollers (sidekiq-cron, sidekiq-scheduler).
// Both gems claim a fire time with a ZADD and push after it, so a process
// killed in between skips that fire time forever. Node keeps the gem's claim
// (same key, same member: Ruby pollers see Node's claims as today) and adds an
// in-flight entry beside it, in three steps:
//   1. one script makes the gem's ZADD and, only if it added the member,
//      records the entry naming this process (claimAddonFireTime);
//   2. the payload is prepared (client middleware runs once, on the winner)
//      and stored in the entry if it is still ours (replaceAddonClaim);
//   3. one script deletes the entry and, only if it deleted it, pushes the
//      stored payload with the gem's bookkeeping (pushAddonClaim).
// Any live poller of the same kind finishes the entries of dead processes
// (heartbeat gone, as recovery.ts decides), a slice of the hash each poll: with
// the stored payload, or prepared afresh when the owner died before step 2.
// A poller also finishes its own entries that it no longer works on: after a
// failover to a replica that had a claim but not its push (asynchronous
// replication), or a claim whose reply was lost and which was sent again.
// Each fire time is then pushed once: lost 0 and duplicated 0.
import { hostname as osHostname } from "node:os";
import type { Redis } from "ioredis";
import { ActiveJobDefinition, type ActiveJobOptions } from "../../core/client/activejob.js";
import type { Client } from "../../core/client/client.js";
import {
  DEFAULT_JOB_OPTIONS,
  normalizeItem,
  type JobHash,
  type JobOptions,
  type PushItem,
} from "../../core/client/normalize.js";
import { claimAddonFireTime, pushAddonClaim, replaceAddonClaim } from "../../core/redis/scripts/index.js";
import { processDead } from "../../core/server/recovery.js";
import { ADDON_CLAIMS } from "../../core/wire/bridge-keys.js";
import { JobRecord } from "../../core/wire/job-record.js";
import { QUEUES_KEY, queueKey } from "../../core/wire/keys.js";
import type { RubyJsonValue } from "../../core/wire/ruby-json.js";

/**
 * Called after step 1 (`claimed`) and step 2 (`prepared`) of a won claim, with
 * its field, before the next step: tests pass one that never resolves, to
 * kill the process at that exact point.
 */
export type ClaimStageHook = (stage: "claimed" | "prepared", field: string) => Promise<void>;

/** What the cron and scheduler enqueue functions need of a client: a push, and ActiveJob handles. */
export interface AddonPushClient {
  push(item: PushItem, classDefaults?: Readonly<JobOptions>): Promise<string | null>;
  activeJob(className: string, options?: ActiveJobOptions): ActiveJobDefinition<unknown[]>;
}

/**
 * Stands in for the client in an enqueue function: keeps the job that function
 * pushes, normalized as Client#push normalizes it, instead of pushing it.
 */
class PreparingClient implements AddonPushClient {
  job?: JobHash;
  constructor(private readonly client: Client) {}

  async push(item: PushItem, classDefaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS): Promise<string | null> {
    const profile = await this.client.profile(String(item.queue ?? classDefaults.queue ?? "default"));
    this.job = normalizeItem(item, profile, classDefaults);
    return String(this.job.jid);
  }

  pushBulk(): Promise<Array<string | null>> {
    return Promise.reject(new Error("an add-on claim pushes one job"));
  }

  profile(queue?: string) {
    return this.client.profile(queue);
  }

  activeJob(className: string, options?: ActiveJobOptions): ActiveJobDefinition<unknown[]> {
    return new ActiveJobDefinition(this, className, options ?? {});
  }
}

/** A payload ready for step 3, with the gem's bookkeeping of the push. */
export interface PreparedClaim {
  queue: string;
  /** The payload as LPUSHed; "" when a client middleware stopped the job. */
  payload: string;
  jid: string | null;
  /** The gem's record of the push (cron: last_enqueue_time and jid_history), written with it. */
  record?: { keys: string[]; args: Array<string | number> };
  /** The Redis of the job's queue when it is not the poller's (a sharded client). */
  shard?: Redis;
}

/** What a claim pushes when there is nothing to push (no class, a refused job). */
export const NOTHING_TO_PUSH: PreparedClaim = { queue: "default", payload: "", jid: null };

/** The entry with what step 3 needs; the payload only when step 3 pushes it on the claims' Redis. */
function storedEntry(entry: ClaimEntry, prepared: PreparedClaim): ClaimEntry {
  const { shard, ...rest } = prepared;
  return { ...entry, ...rest, ...(shard ? { payload: undefined } : {}) };
}

/**
 * Runs an enqueue function against a stand-in client and prepares the job it
 * would push, as Client#pushRecord prepares it (client middleware, enqueued_at).
 */
export async function prepareAddonPush(
  client: Client,
  redis: Redis,
  enqueue: (c: AddonPushClient) => Promise<unknown>,
): Promise<PreparedClaim> {
  const stand = new PreparingClient(client);
  await enqueue(stand);
  if (!stand.job) throw new Error("the enqueue function pushed nothing");
  const entries = Object.entries(stand.job).filter((e): e is [string, RubyJsonValue] => e[1] !== undefined);
  const p = await client.prepareRecord(JobRecord.fromEntries(entries));
  if (!p) return { queue: String(stand.job.queue), payload: "", jid: null };
  return { queue: p.queue, payload: p.json, jid: p.jid, ...(p.redis === redis ? {} : { shard: p.redis }) };
}

/** Where a fire time is claimed: the gem's set, score and member. */
export interface ClaimTarget {
  set: string;
  score: string | number;
  member: string;
  /** EXPIRE of the set after the ZADD (sidekiq-scheduler's pushed keys). */
  expire?: number;
}

/** An in-flight entry: its owner, what its kind needs to prepare it again, and once prepared the payload. */
export interface ClaimEntry extends Partial<PreparedClaim> {
  owner: string;
  info: Record<string, string | number>;
}

/** A claim this process won: its field and entry as stored. */
export interface WonClaim {
  field: string;
  raw: string;
  entry: ClaimEntry;
}

/** Who left a recovered claim, for the log line: a dead process, or this one (its push lost, as in a failover). */
export function claimedBy(owner: string, identity: string | undefined): string {
  return owner === identity ? "this process, its push lost (a failover?)" : `dead process ${owner}`;
}

/** Prepares a claimed fire time again (recovery); undefined when its job no longer exists. */
export type ClaimPreparer = (info: ClaimEntry["info"]) => Promise<PreparedClaim | undefined>;

/** The in-flight claims of one kind of poller, owned by one process. */
export class AddonClaims {
  private cursor = "0";
  /** Fields this process is claiming or pushing now: an entry of its own not here is an orphan. */
  private readonly working = new Set<string>();

  constructor(
    private readonly redis: Redis,
    private readonly kind: "cron" | "scheduler",
    private readonly identity: string,
    private readonly hostname = osHostname(),
    private readonly afterStage?: ClaimStageHook,
  ) {}

  /** Step 1: the gem's ZADD and, if it added the member, the in-flight entry. Undefined when another poller won. */
  async claim(target: ClaimTarget, info: ClaimEntry["info"]): Promise<WonClaim | undefined> {
    const field = `${this.kind}|${target.set}|${target.member}`;
    const entry: ClaimEntry = { owner: this.identity, info };
    const raw = JSON.stringify(entry);
    this.working.add(field);
    let added: number | undefined;
    try {
      added = await claimAddonFireTime(
        this.redis,
        [target.set, ADDON_CLAIMS],
        [String(target.score), target.member, field, raw, target.expire === undefined ? "" : String(target.expire)],
      );
    } finally {
      // Kept only for a won claim, until push() ends it.
      if (added !== 1) this.working.delete(field);
    }
    if (added !== 1) return undefined;
    await this.afterStage?.("claimed", field);
    return { field, raw, entry };
  }

  /**
   * Steps 2 and 3: stores the prepared payload in the entry, then pushes it and
   * deletes the entry in one step. False when recovery took the entry over
   * (it then pushes).
   */
  async push(claim: WonClaim, prepared: PreparedClaim): Promise<boolean> {
    try {
      const stored = storedEntry(claim.entry, prepared);
      const raw = JSON.stringify(stored);
      if ((await replaceAddonClaim(this.redis, [ADDON_CLAIMS], [claim.field, claim.raw, raw])) !== 1) return false;
      await this.afterStage?.("prepared", claim.field);
      return await this.complete(claim.field, raw, stored, prepared);
    } finally {
      this.working.delete(claim.field);
    }
  }

  /**
   * Steps 2 and 3 with the payload `prepare` makes. When it throws (a job the
   * client refuses), the claim is given up as the gem gives it up (claimed,
   * nothing pushed, no entry left behind) and the error rethrown. Returns what
   * was pushed, undefined when recovery took the entry over.
   */
  async pushPrepared(claim: WonClaim, prepare: () => Promise<PreparedClaim>): Promise<PreparedClaim | undefined> {
    let prepared: PreparedClaim;
    try {
      prepared = await prepare();
    } catch (e) {
      await this.push(claim, NOTHING_TO_PUSH);
      throw e;
    }
    return (await this.push(claim, prepared)) ? prepared : undefined;
  }

  /**
   * Step 3. A job whose queue is on another shard is pushed there first and
   * its entry (stored without the payload, so recovery prepares it again)
   * deleted after: a kill between the two may push that one twice.
   */
  private async complete(field: string, raw: string, entry: ClaimEntry, prepared: PreparedClaim): Promise<boolean> {
    const queue = prepared.queue;
    if (prepared.shard && prepared.payload !== "")
      await prepared.shard.multi().sadd(QUEUES_KEY, queue).lpush(queueKey(queue), prepared.payload).exec();
    const record = entry.record ?? { keys: [], args: [] };
    const pushed = await pushAddonClaim(
      this.redis,
      [ADDON_CLAIMS, QUEUES_KEY, queueKey(queue), ...record.keys],
      [field, raw, queue, prepared.shard ? "" : prepared.payload, ...record.args],
    );
    return pushed === 1;
  }

  /**
   * Recovery, a slice of the hash per call (HSCAN): finishes the entries of
   * dead processes, with their stored payload or one `prepare` makes afresh.
   * Returns the fire times this call pushed.
   */
  async recover(prepare: ClaimPreparer, count = 50): Promise<ClaimEntry[]> {
    const [next, flat] = await this.redis.hscan(ADDON_CLAIMS, this.cursor, "MATCH", `${this.kind}|*`, "COUNT", count);
    this.cursor = next;
    const recovered: ClaimEntry[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const field = flat[i]!;
      const raw = flat[i + 1]!;
      let entry: ClaimEntry;
      try {
        entry = JSON.parse(raw) as ClaimEntry;
      } catch {
        continue; // not ours to judge: left as it is
      }
      const mine = entry.owner === this.identity;
      if (mine ? this.working.has(field) : !(await processDead(this.redis, entry.owner, this.hostname))) continue;
      // Taken over first, so the owner (were it alive after all) and other recoverers step aside.
      let taken: ClaimEntry = { ...entry, owner: this.identity };
      let takenRaw = JSON.stringify(taken);
      if ((await replaceAddonClaim(this.redis, [ADDON_CLAIMS], [field, raw, takenRaw])) !== 1) continue;
      let prepared: PreparedClaim;
      if (taken.payload !== undefined)
        prepared = { queue: taken.queue ?? "default", payload: taken.payload, jid: null };
      else {
        // Died before step 2 (or its job is on another shard): prepared now, as the owner would have.
        // A job gone since, or one the client refuses: the entry goes, nothing is pushed (as the owner would have).
        prepared = (await prepare(entry.info).catch(() => undefined)) ?? NOTHING_TO_PUSH;
        const stored = storedEntry(taken, prepared);
        const storedRaw = JSON.stringify(stored);
        if ((await replaceAddonClaim(this.redis, [ADDON_CLAIMS], [field, takenRaw, storedRaw])) !== 1) continue;
        [taken, takenRaw] = [stored, storedRaw];
      }
      if (await this.complete(field, takenRaw, taken, prepared)) recovered.push({ ...taken, owner: entry.owner });
    }
    return recovered;
  }
}
