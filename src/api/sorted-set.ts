// Ruby's `Sidekiq::ScheduledSet`, `RetrySet` and `DeadSet` (api.rb): the
// `schedule`, `retry` and `dead` sorted sets, scored by epoch seconds.
//
// Listing follows Ruby's `JobSet#each`: highest score first (the farthest scheduled
// time, the latest retry, the most recent death). The actions keep Ruby's
// semantics:
//
//   retry          remove; `retry_count -= 1` when it holds a value; Client.push
//                  (a new `enqueued_at`; here through Client#pushRecord, so
//                  every other member keeps its bytes)
//   addToQueue     remove; Client.push
//   kill           remove; DeadSet#kill: 7.3.5+ `ZADD dead <now> <message>`,
//                  then MULTI{ZREMRANGEBYSCORE dead -inf <now-timeout>;
//                  ZREMRANGEBYRANK dead 0 -<max>}; before 7.3.5 the three in one MULTI
//   delete         ZREM of the exact member
//   retryAll /     7.3.5+ `pop_each`: ZPOPMIN one at a time, `size` times
//   killAll        (kill_all trims once at the end)
//   clear          UNLINK
//
// Removal. Ruby's `remove_job` takes every member with the entry's score
// (MULTI{ZRANGE BYSCORE; ZREMRANGEBYSCORE}) and ZADDs back the ones whose jid
// differs; `removeByScore` does exactly that. The actions here remove by
// `ZREM` of the exact member we listed instead: one atomic command that
// touches no sibling, and a 0 reply means someone else (a poller, another
// API call) already took the job, which is then left alone. Both leave Redis
// in the same state. Unlike Ruby, the push target (client, dialect) is
// resolved and the payload rewritten *before* the member is removed, and a
// push that fails puts the member back with its score, so no job is lost.
import type { Client } from "../client/client.js";
import { releaseRules } from "../wire/release-rules.js";
import type { JobRecord } from "../wire/job-record.js";
import { isFloatLexeme } from "../wire/json-scan.js";
import { RubyFloat, rubyFloatToS } from "../wire/ruby-json.js";
import { DEFAULT_DEAD_MAX_JOBS, DEFAULT_DEAD_TIMEOUT_SECONDS } from "../wire/sidekiq-constants.js";
import type { ApiContext } from "./context.js";
import { execReplies } from "../redis/replies.js";
import {
  globEscape,
  hasFilter,
  matchesFilter,
  parseStored,
  viewOf,
  type JobFilter,
  type JobView,
} from "./job-entry.js";

/** The Redis key of a sorted job set: `schedule`, `retry` or `dead`. */
export type JobSetName = "schedule" | "retry" | "dead";

/** What can be done to one entry of a job set (the Web UI's buttons). */
export type EntryAction = "retry" | "add-to-queue" | "kill" | "delete";

/** A job in a sorted set, with its score (when it is due, or when it died). */
export interface SortedEntry extends JobView {
  /** The sorted set's key. */
  set: string;
  /** The score exactly as Redis returned it (reused verbatim for BYSCORE and re-adds). */
  score: string;
  /** The score as epoch seconds: run-at time (schedule, retry) or time of death (dead). */
  at: number;
}

/** What a bulk action did: how many jobs it changed, and which it could not. */
export interface BulkResult {
  /** Jobs acted on. */
  done: number;
  /** Members that could not be acted on (not a JSON object, a `retry_count` Ruby cannot decrement). */
  failed: Array<{ raw: string; error: string }>;
}

export interface DeadSetConfig {
  /** `dead_timeout_in_seconds` (default 180 days). */
  deadTimeoutSeconds?: number;
  /** `dead_max_jobs` (default 10,000). */
  deadMaxJobs?: number;
}

/** A job-set action that cannot be done, as Ruby's API raises (e.g. decrementing a `retry_count` that is not a number). */
export class JobSetError extends Error {
  override name = "JobSetError";
}

/**
 * `msg["retry_count"] -= 1 if msg["retry_count"]`: an Integer stays an
 * Integer (0 becomes -1, as in Ruby), a Float a Float; absent, null or false
 * is left alone. Anything else makes Ruby raise NoMethodError; so do we.
 */
export function decrementRetryCount(rec: JobRecord): void {
  const raw = rec.raw("retry_count");
  if (raw === undefined || raw === "null" || raw === "false") return;
  if (/^-?\d/.test(raw)) {
    if (isFloatLexeme(raw)) rec.set("retry_count", new RubyFloat(Number(raw) - 1));
    else {
      const n = BigInt(raw) - 1n;
      rec.set(
        "retry_count",
        n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n,
      );
    }
    return;
  }
  throw new JobSetError(`retry_count is ${raw}, which Ruby cannot decrement (undefined method '-')`);
}

function toEntries(set: string, flat: string[]): SortedEntry[] {
  const out: SortedEntry[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const raw = flat[i]!;
    const score = flat[i + 1]!;
    out.push({ ...viewOf(raw), set, score, at: Number(score) });
  }
  return out;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A sorted job set (`Sidekiq::SortedSet`): list, find, retry, kill, delete and reschedule its jobs. */
export class SortedJobSet {
  constructor(
    protected readonly ctx: ApiContext,
    readonly name: JobSetName,
    protected readonly config: DeadSetConfig = {},
  ) {}

  private deadSet?: DeadSet;
  protected get dead(): DeadSet {
    if (this.name === "dead" && this instanceof DeadSet) return this;
    return (this.deadSet ??= new DeadSet(this.ctx, this.config));
  }

  /** ZCARD. */
  size(): Promise<number> {
    return this.ctx.redis.zcard(this.name);
  }

  /** One page in `each` order (highest score first): ZREVRANGE offset offset+limit-1 WITHSCORES. */
  async page(offset = 0, limit = 50): Promise<SortedEntry[]> {
    if (limit <= 0) return [];
    return toEntries(this.name, await this.ctx.redis.zrevrange(this.name, offset, offset + limit - 1, "WITHSCORES"));
  }

  /**
   * Up to `limit` entries matching `filter`, skipping the first `offset`
   * matches, in `each` order. Reads pages of `pageSize` until enough match.
   */
  async list(
    opts: { offset?: number; limit?: number; filter?: JobFilter; pageSize?: number } = {},
  ): Promise<SortedEntry[]> {
    const { offset = 0, limit = 50, filter, pageSize = 200 } = opts;
    if (!hasFilter(filter)) return this.page(offset, limit);
    const out: SortedEntry[] = [];
    let skipped = 0;
    for (let start = 0; out.length < limit; start += pageSize) {
      const page = await this.page(start, pageSize);
      for (const e of page) {
        if (!matchesFilter(e, filter)) continue;
        if (skipped < offset) skipped++;
        else if (out.length < limit) out.push(e);
      }
      if (page.length < pageSize) break;
    }
    return out;
  }

  /** Every entry, in `each` order, read a page at a time (entries moving meanwhile may be seen twice or missed). */
  async *each(pageSize = 50): AsyncGenerator<SortedEntry> {
    for (let start = 0; ; start += pageSize) {
      const page = await this.page(start, pageSize);
      yield* page;
      if (page.length < pageSize) return;
    }
  }

  /**
   * Every member once, by ZSCAN (which returns each member present for the
   * whole scan at least once; duplicates are dropped), optionally filtered.
   */
  async scan(filter?: JobFilter, match?: string): Promise<SortedEntry[]> {
    const seen = new Map<string, SortedEntry>();
    let cursor = "0";
    do {
      const [next, flat] = match
        ? await this.ctx.redis.zscan(this.name, cursor, "MATCH", match, "COUNT", 100)
        : await this.ctx.redis.zscan(this.name, cursor, "COUNT", 100);
      for (const e of toEntries(this.name, flat)) if (!seen.has(e.raw) && matchesFilter(e, filter)) seen.set(e.raw, e);
      cursor = next;
    } while (cursor !== "0");
    return [...seen.values()];
  }

  /** `find_job`: ZSCAN MATCH *<jid>*, then the first member whose parsed jid is equal. */
  async find(jid: string): Promise<SortedEntry | undefined> {
    let cursor = "0";
    do {
      const [next, flat] = await this.ctx.redis.zscan(this.name, cursor, "MATCH", `*${globEscape(jid)}*`, "COUNT", 100);
      const hit = toEntries(this.name, flat).find((e) => e.jid === jid);
      if (hit) return hit;
      cursor = next;
    } while (cursor !== "0");
    return undefined;
  }

  /** `fetch(score, jid = nil)`: the members with exactly this score (ZRANGEBYSCORE score score), optionally one jid. */
  async fetch(score: string | number, jid?: string): Promise<SortedEntry[]> {
    const s = typeof score === "number" ? rubyFloatToS(score) : score;
    const all = toEntries(this.name, await this.ctx.redis.zrangebyscore(this.name, s, s, "WITHSCORES"));
    return jid === undefined ? all : all.filter((e) => e.jid === jid);
  }

  /** ZREM of the exact member: true when this call removed it. */
  async take(entry: Pick<SortedEntry, "raw">): Promise<boolean> {
    return (await this.ctx.redis.zrem(this.name, entry.raw)) > 0;
  }

  /**
   * Ruby's `remove_job`, step for step: MULTI{ZRANGEBYSCORE s s; ZREMRANGEBYSCORE s s};
   * a lone member is taken as is; among several, the first whose jid matches is
   * taken and the others are ZADDed back (score as Ruby's `score.to_f.to_s`).
   * Returns the removed member, if any.
   */
  async removeByScore(score: string | number, jid: string | undefined): Promise<string | undefined> {
    const s = typeof score === "number" ? rubyFloatToS(score) : score;
    const [members] = execReplies(
      await this.ctx.redis.multi().zrangebyscore(this.name, s, s).zremrangebyscore(this.name, s, s).exec(),
      `remove from ${this.name}`,
    ) as [string[], number];
    if (members.length === 1) return members[0];
    const matched: string[] = [];
    const others: string[] = [];
    for (const m of members)
      (jid !== undefined && m.includes(jid) && parseStored(m)?.getString("jid") === jid ? matched : others).push(m);
    if (others.length > 0) {
      const tx = this.ctx.redis.multi();
      for (const m of others) tx.zadd(this.name, rubyFloatToS(Number(s)), m);
      execReplies(await tx.exec(), `re-add to ${this.name}`);
    }
    return matched[0];
  }

  /** `SortedEntry#delete` with the value known: ZREM. */
  delete(entry: Pick<SortedEntry, "raw">): Promise<boolean> {
    return this.take(entry);
  }

  /** `delete_by_jid(score, jid)`: among the members with this score, ZREM the first whose jid matches. */
  async deleteByJid(score: string | number, jid: string): Promise<boolean> {
    for (const e of await this.fetch(score)) if (e.jid === jid) return this.take(e);
    return false;
  }

  /** Removes `entry` and pushes `rec` with `client`; puts the member back if the push fails. */
  private async move(entry: SortedEntry, rec: JobRecord, client: Client): Promise<boolean> {
    if (!(await this.take(entry))) return false;
    try {
      await client.pushRecord(rec);
    } catch (e) {
      await this.ctx.redis.zadd(this.name, entry.score, entry.raw);
      throw e;
    }
    return true;
  }

  private recordOf(raw: string): JobRecord {
    const rec = parseStored(raw);
    if (!rec)
      throw new JobSetError(
        `the ${this.name} member is not a JSON object, so it cannot be pushed: ${raw.slice(0, 80)}`,
      );
    return rec;
  }

  /** `SortedEntry#retry`. False when the member was no longer there. */
  async retry(entry: SortedEntry): Promise<boolean> {
    const rec = this.recordOf(entry.raw);
    decrementRetryCount(rec);
    return this.move(entry, rec, await this.ctx.clientFor(rec));
  }

  /** `SortedEntry#add_to_queue`. False when the member was no longer there. */
  async addToQueue(entry: SortedEntry): Promise<boolean> {
    const rec = this.recordOf(entry.raw);
    return this.move(entry, rec, await this.ctx.clientFor(rec));
  }

  /** `SortedEntry#kill`: into the dead set, bytes unchanged. False when the member was no longer there. */
  async kill(entry: SortedEntry): Promise<boolean> {
    if (!(await this.take(entry))) return false;
    await this.dead.killMessage(entry.raw);
    return true;
  }

  /** One of the Web UI's actions on an entry, by name. False when the member was no longer there. */
  act(action: EntryAction, entry: SortedEntry): Promise<boolean> {
    switch (action) {
      case "retry":
        return this.retry(entry);
      case "add-to-queue":
        return this.addToQueue(entry);
      case "kill":
        return this.kill(entry);
      case "delete":
        return this.delete(entry);
    }
  }

  /** `pop_each`: ZPOPMIN one member at a time, at most `size` times. Members `fn` fails on are put back afterwards. */
  private async popEach(fn: (raw: string) => Promise<void>): Promise<BulkResult> {
    const n = await this.size();
    const result: BulkResult = { done: 0, failed: [] };
    const putBack: Array<[string, string]> = [];
    try {
      for (let i = 0; i < n; i++) {
        const popped = await this.ctx.redis.zpopmin(this.name, 1);
        if (popped.length < 2) break;
        const [raw, score] = popped as [string, string];
        try {
          await fn(raw);
          result.done++;
        } catch (e) {
          putBack.push([score, raw]);
          result.failed.push({ raw, error: message(e) });
        }
      }
    } finally {
      for (const [score, raw] of putBack) await this.ctx.redis.zadd(this.name, score, raw);
    }
    return result;
  }

  /** Runs `fn` on each entry matching `filter` (taken by ZSCAN first). */
  private async eachMatching(filter: JobFilter, fn: (e: SortedEntry) => Promise<boolean>): Promise<BulkResult> {
    const result: BulkResult = { done: 0, failed: [] };
    for (const e of await this.scan(filter)) {
      try {
        if (await fn(e)) result.done++;
      } catch (err) {
        result.failed.push({ raw: e.raw, error: message(err) });
      }
    }
    return result;
  }

  /** `retry_all` (7.3.5+: ZPOPMIN); with a filter, `retry` on each matching entry. */
  async retryAll(filter?: JobFilter): Promise<BulkResult> {
    if (filter && hasFilter(filter)) return this.eachMatching(filter, (e) => this.retry(e));
    return this.popEach(async (raw) => {
      const rec = this.recordOf(raw);
      decrementRetryCount(rec);
      await (await this.ctx.clientFor(rec)).pushRecord(rec);
    });
  }

  /** Every job back to its queue without touching retry_count (`add_to_queue` on each). */
  async addAllToQueue(filter?: JobFilter): Promise<BulkResult> {
    if (filter && hasFilter(filter)) return this.eachMatching(filter, (e) => this.addToQueue(e));
    return this.popEach(async (raw) => {
      const rec = this.recordOf(raw);
      await (await this.ctx.clientFor(rec)).pushRecord(rec);
    });
  }

  /** `kill_all(notify_failure: false)`: each popped member into the dead set untrimmed, then one trim. */
  async killAll(filter?: JobFilter): Promise<BulkResult> {
    const dead = this.dead;
    try {
      if (filter && hasFilter(filter)) {
        return await this.eachMatching(filter, async (e) => {
          if (!(await this.take(e))) return false;
          await dead.killMessage(e.raw, { trim: false });
          return true;
        });
      }
      return await this.popEach((raw) => dead.killMessage(raw, { trim: false }));
    } finally {
      await dead.trim();
    }
  }

  /** Deletes every entry matching `filter` (ZREM each); without a filter, `clear`. */
  async deleteAll(filter?: JobFilter): Promise<BulkResult> {
    if (filter && hasFilter(filter)) return this.eachMatching(filter, (e) => this.take(e));
    const n = await this.size();
    await this.clear();
    return { done: n, failed: [] };
  }

  /** `SortedSet#clear`: UNLINK. */
  async clear(): Promise<void> {
    await this.ctx.redis.unlink(this.name);
  }
}

/** `Sidekiq::ScheduledSet`: jobs waiting for their time. */
export class ScheduledSet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, "schedule", config);
  }
}

/** `Sidekiq::RetrySet`: failed jobs waiting to be retried. */
export class RetrySet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, "retry", config);
  }
}

/** `Sidekiq::DeadSet` (the Morgue): jobs that ran out of retries. */
export class DeadSet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, "dead", config);
  }

  private get timeout(): number {
    return this.config.deadTimeoutSeconds ?? DEFAULT_DEAD_TIMEOUT_SECONDS;
  }

  private get maxJobs(): number {
    return this.config.deadMaxJobs ?? DEFAULT_DEAD_MAX_JOBS;
  }

  /**
   * `DeadSet#kill(message)`: adds the member, bytes unchanged, scored now.
   * 7.3.5+: ZADD, then `trim` unless `trim: false`. Before 7.3.5: one MULTI
   * of ZADD and both trims. (Ruby's death handlers are not run: Node has none.)
   */
  async killMessage(raw: string, opts: { trim?: boolean } = {}): Promise<void> {
    const nowS = this.ctx.now() / 1000;
    if (releaseRules(this.ctx.rules).api.deadSetKill === "zadd-then-trim") {
      await this.ctx.redis.zadd(this.name, rubyFloatToS(nowS), raw);
      if (opts.trim !== false) await this.trim();
      return;
    }
    execReplies(
      await this.ctx.redis
        .multi()
        .zadd(this.name, rubyFloatToS(nowS), raw)
        .zremrangebyscore(this.name, "-inf", rubyFloatToS(nowS - this.timeout))
        .zremrangebyrank(this.name, 0, -this.maxJobs)
        .exec(),
      "kill",
    );
  }

  /** `DeadSet#trim`: MULTI{ZREMRANGEBYSCORE dead -inf <now - timeout>; ZREMRANGEBYRANK dead 0 -<max>}. */
  async trim(): Promise<void> {
    const nowS = this.ctx.now() / 1000;
    execReplies(
      await this.ctx.redis
        .multi()
        .zremrangebyscore(this.name, "-inf", rubyFloatToS(nowS - this.timeout))
        .zremrangebyrank(this.name, 0, -this.maxJobs)
        .exec(),
      "trim dead",
    );
  }
}
