// Ruby's `Sidekiq::SortedSet` and `JobSet` (api.rb): what the `schedule`,
// `retry` and `dead` sorted sets, scored by epoch seconds, share (the three by
// name are in job-sets.ts).
//
// Listing follows Ruby's `JobSet#each`: highest score first (the farthest scheduled
// time, the latest retry, the most recent death), or lowest first when asked
// ("asc": Ruby's Web UI lists retries and scheduled jobs soonest first); pages
// are ranges by rank, so a deep page costs what the first does. The Web UI's
// filter reads bounded ranges under a budget (`filteredPage`) or scans for the
// text (`matching`). The actions keep Ruby's semantics:
//
//   retry          remove; `retry_count -= 1` when it holds a value; Client.push
//                  (a new `enqueued_at`; here through Client#pushRecord, so
//                  every other member keeps its bytes)
//   addToQueue     remove; Client.push
//   kill           remove; DeadSet#kill (morgue.ts): 7.3.5+ `ZADD dead <now> <message>`,
//                  then MULTI{ZREMRANGEBYSCORE dead -inf <now-timeout>;
//                  ZREMRANGEBYRANK dead 0 -<max>}; before 7.3.5 the three in one MULTI
//   delete         ZREM of the exact member
//   retryAll,      in atomic batches of ZREM + write (bulk-action.ts), never
//   killAll, ...   a ZPOPMIN that a crash could lose (Ruby's `pop_each`)
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
import { execReplies } from "../redis/replies.js";
import type { JobRecord } from "../wire/job-record.js";
import { rubyFloatToS } from "../wire/ruby-json.js";
import type { ApiContext } from "./context.js";
import { globEscape, hasFilter, matchesFilter, parseStored, type JobFilter } from "./job-entry.js";
import { killIntoDeadSet, type DeadSetConfig } from "./morgue.js";
import { bulkResult, runBulkAction, type BulkActionOptions, type BulkSummary } from "./bulk-action.js";
import {
  decrementRetryCount,
  entriesOf,
  entryOf,
  JobSetError,
  type BulkResult,
  type EntryAction,
  type FilteredPage,
  type JobSetName,
  type SortedEntry,
} from "./sorted-entry.js";

/** Members one ZSCAN call looks at when matching text: large, so a filter over 100,000 entries is a few round trips. */
const LARGE_SCAN_COUNT = 10_000;
/** At most this many members are looked at per filtered page. */
export const FILTER_SCAN_BUDGET = 20_000;
/** Members read per range of a filtered page. */
const FILTER_CHUNK = 2_000;

/** Listing order by score: "desc" is Ruby's `JobSet#each` (highest first), "asc" lowest first. */
export type ListOrder = "asc" | "desc";

/** A sorted job set (`Sidekiq::SortedSet`): list, find, retry, kill, delete and reschedule its jobs. */
export class SortedJobSet {
  constructor(
    protected readonly ctx: ApiContext,
    readonly name: JobSetName,
    protected readonly config: DeadSetConfig = {},
  ) {}

  /** ZCARD. */
  size(): Promise<number> {
    return this.ctx.redis.zcard(this.name);
  }

  /**
   * One page by rank, O(log N + limit) at any depth: in `each` order (highest
   * score first, ZREVRANGE) by default, or lowest first ("asc", ZRANGE), the
   * order Ruby's Web UI lists retries and scheduled jobs in.
   */
  async page(offset = 0, limit = 50, order: ListOrder = "desc"): Promise<SortedEntry[]> {
    if (limit <= 0) return [];
    return entriesOf(this.name, await this.range(offset, offset + limit - 1, order));
  }

  private range(start: number, stop: number, order: ListOrder): Promise<string[]> {
    return order === "asc"
      ? this.ctx.redis.zrange(this.name, start, stop, "WITHSCORES")
      : this.ctx.redis.zrevrange(this.name, start, stop, "WITHSCORES");
  }

  /**
   * Up to `limit` entries matching `filter`, skipping the first `offset`
   * matches, in `order` (`each` order by default). Reads pages of `pageSize` until enough match.
   */
  async list(
    opts: { offset?: number; limit?: number; filter?: JobFilter; pageSize?: number; order?: ListOrder } = {},
  ): Promise<SortedEntry[]> {
    const { offset = 0, limit = 50, filter, pageSize = 200, order = "desc" } = opts;
    if (!hasFilter(filter)) return this.page(offset, limit, order);
    const out: SortedEntry[] = [];
    let skipped = 0;
    for (let start = 0; out.length < limit; start += pageSize) {
      const page = await this.page(start, pageSize, order);
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

  /** ZSCAN over the whole set (MATCH `match` when given), one reply at a time: `[member, score, …]`. */
  private async *zscanReplies(match: string | undefined, count: number): AsyncGenerator<string[]> {
    let cursor = "0";
    do {
      const [next, flat] = match
        ? await this.ctx.redis.zscan(this.name, cursor, "MATCH", match, "COUNT", count)
        : await this.ctx.redis.zscan(this.name, cursor, "COUNT", count);
      yield flat;
      cursor = next;
    } while (cursor !== "0");
  }

  /**
   * Every member once, by ZSCAN (which returns each member present for the
   * whole scan at least once; duplicates are dropped), optionally filtered.
   */
  async scan(filter?: JobFilter, match?: string): Promise<SortedEntry[]> {
    const seen = new Map<string, SortedEntry>();
    for await (const flat of this.zscanReplies(match, 100))
      for (const e of entriesOf(this.name, flat)) if (!seen.has(e.raw) && matchesFilter(e, filter)) seen.set(e.raw, e);
    return [...seen.values()];
  }

  /**
   * The entries whose stored text contains `substr` (ZSCAN MATCH *substr*, as
   * the Web UI's filter reads Ruby's `JobSet#scan`), newest first, at most
   * `max` of them; `capped` when there were more.
   */
  async matching(substr: string, max: number): Promise<{ entries: SortedEntry[]; capped: boolean }> {
    const seen = new Map<string, SortedEntry>();
    let capped = false;
    scan: for await (const flat of this.zscanReplies(`*${globEscape(substr)}*`, LARGE_SCAN_COUNT)) {
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const raw = flat[i]!;
        if (seen.has(raw)) continue;
        if (seen.size >= max) {
          capped = true;
          break scan;
        }
        seen.set(raw, entryOf(this.name, raw, flat[i + 1]!));
      }
    }
    return { entries: [...seen.values()].sort((a, b) => b.at - a.at), capped };
  }

  /**
   * Up to `limit` entries in `order` (highest score first by default), from
   * rank `from` on, that `match` accepts (`quick` may turn a member down from
   * its text before it is parsed). Reads ranges of FILTER_CHUNK members, so
   * memory stays at one chunk; stops after `budget` members or `budgetMs`
   * milliseconds, whichever comes first, so a page stays fast on any set, and
   * says where to go on.
   */
  async filteredPage(opts: {
    match: (e: SortedEntry) => boolean;
    quick?: (raw: string) => boolean;
    from?: number;
    limit: number;
    budget?: number;
    budgetMs?: number;
    order?: ListOrder;
  }): Promise<FilteredPage> {
    const { match, quick, from = 0, limit, budget = FILTER_SCAN_BUDGET, budgetMs = Infinity, order = "desc" } = opts;
    const entries: SortedEntry[] = [];
    const deadline = performance.now() + budgetMs;
    let at = from;
    while (entries.length < limit && at - from < budget && performance.now() < deadline) {
      const flat = await this.range(at, at + FILTER_CHUNK - 1, order);
      const members = flat.length / 2;
      for (let i = 0; i < members; i++) {
        const raw = flat[i * 2]!;
        if (quick && !quick(raw)) continue;
        const e = entryOf(this.name, raw, flat[i * 2 + 1]!);
        if (!match(e)) continue;
        entries.push(e);
        if (entries.length === limit) {
          at += i + 1;
          return { entries, next: at, scanned: at - from };
        }
      }
      at += members;
      if (members < FILTER_CHUNK) return { entries, next: undefined, scanned: at - from };
    }
    return { entries, next: at, scanned: at - from };
  }

  /** `find_job`: ZSCAN MATCH *<jid>*, then the first member whose parsed jid is equal. */
  async find(jid: string): Promise<SortedEntry | undefined> {
    for await (const flat of this.zscanReplies(`*${globEscape(jid)}*`, 100)) {
      const hit = entriesOf(this.name, flat).find((e) => e.jid === jid);
      if (hit) return hit;
    }
    return undefined;
  }

  /** `fetch(score, jid = nil)`: the members with exactly this score (ZRANGEBYSCORE score score), optionally one jid. */
  async fetch(score: string | number, jid?: string): Promise<SortedEntry[]> {
    const s = typeof score === "number" ? rubyFloatToS(score) : score;
    const all = entriesOf(this.name, await this.ctx.redis.zrangebyscore(this.name, s, s, "WITHSCORES"));
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
    await killIntoDeadSet(this.ctx, this.config, entry.raw);
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

  /**
   * A bulk action (bulk-action.ts) in atomic batches: on every entry, on those
   * `opts` selects (a class / queue filter, a text, given members), with
   * progress; safe beside other actors and resumable after a crash. Throws
   * a BulkActionError (with the summary so far) when Redis refuses a write
   * at maxmemory part-way: run it again once memory is freed.
   */
  bulk(action: EntryAction, opts: BulkActionOptions = {}): Promise<BulkSummary> {
    return runBulkAction(this.ctx, this.name, action, this.config, opts);
  }

  /** `retry_all` in atomic batches (bulk); with a filter, the matching entries. Jobs a middleware stops stay. */
  async retryAll(filter?: JobFilter): Promise<BulkResult> {
    return bulkResult(await this.bulk("retry", { filter }));
  }

  /** Every job (or every matching one) back to its queue without touching retry_count (`add_to_queue` on each). */
  async addAllToQueue(filter?: JobFilter): Promise<BulkResult> {
    return bulkResult(await this.bulk("add-to-queue", { filter }));
  }

  /** `kill_all(notify_failure: false)` in atomic batches, each trimming the dead set; with a filter, the matching entries. */
  async killAll(filter?: JobFilter): Promise<BulkResult> {
    return bulkResult(await this.bulk("kill", { filter }));
  }

  /** Deletes every entry matching `filter` (ZREM in batches); without a filter, `clear`. */
  async deleteAll(filter?: JobFilter): Promise<BulkResult> {
    return bulkResult(await this.bulk("delete", { filter }));
  }

  /** `SortedSet#clear`: UNLINK. */
  async clear(): Promise<void> {
    await this.ctx.redis.unlink(this.name);
  }
}
