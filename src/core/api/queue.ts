// Ruby's `Sidekiq::Queue`: the `queues` set and one `queue:<name>` list.
// Entries are listed head first (the newest, as LPUSH puts them), like
// `Queue#each`; the oldest job is at index -1, where latency is read.
import { byteCompare, sscanAll, type ApiContext } from "./context.js";
import { execReplies } from "../redis/replies.js";
import { QUEUES_KEY, queueKey } from "../wire/keys.js";
import { viewOf, type JobView } from "./job-entry.js";
import { jobLatency, latencyRuleFor } from "./latency.js";

/** A job waiting in a queue. */
export interface QueueEntry extends JobView {
  /** The queue (list) the entry was read from, which may differ from the payload's `queue`. */
  list: string;
  /** The LRANGE index it was read at (0 = newest). */
  index: number;
}

/** `Sidekiq::Queue.all`: the names in the `queues` set, sorted. */
export async function allQueueNames(ctx: ApiContext): Promise<string[]> {
  return (await sscanAll(ctx.redis, QUEUES_KEY)).sort(byteCompare);
}

/** `Sidekiq::Queue`: size, latency, listing, deleting and clearing the jobs of one queue. */
export class Queue {
  readonly key: string;

  constructor(
    private readonly ctx: ApiContext,
    readonly name: string,
  ) {
    this.key = queueKey(name);
  }

  /** LLEN. */
  size(): Promise<number> {
    return this.ctx.redis.llen(this.key);
  }

  /** Seconds since the oldest job (index -1) was enqueued, by the rules of the API's release. */
  async latency(): Promise<number> {
    const entry = await this.ctx.redis.lindex(this.key, -1);
    return jobLatency(entry, latencyRuleFor(this.ctx.rules), this.ctx.now());
  }

  /** One page: LRANGE offset offset+limit-1 (newest first). */
  async page(offset = 0, limit = 50): Promise<QueueEntry[]> {
    if (limit <= 0) return [];
    const raws = await this.ctx.redis.lrange(this.key, offset, offset + limit - 1);
    return raws.map((raw, i) => ({ ...viewOf(raw), list: this.name, index: offset + i }));
  }

  /**
   * Every entry, as `Queue#each` walks them: pages of 50, shifted back by what
   * was removed meanwhile (`initial_size - size`), so deleting while iterating
   * does not skip entries.
   */
  async *each(pageSize = 50): AsyncGenerator<QueueEntry> {
    const initial = await this.size();
    let deleted = 0;
    for (let page = 0; ; page++) {
      const start = page * pageSize - deleted;
      const entries = await this.page(start, pageSize);
      if (entries.length === 0) return;
      yield* entries;
      deleted = initial - (await this.size());
    }
  }

  /** `find_job`: the first entry whose jid matches (slow: walks the list). */
  async findJob(jid: string): Promise<QueueEntry | undefined> {
    for await (const e of this.each()) if (e.jid === jid) return e;
    return undefined;
  }

  /** `JobRecord#delete`: LREM queue:<name> 1 <exact string>; true when something was removed. */
  async delete(entry: Pick<QueueEntry, "raw">): Promise<boolean> {
    return (await this.ctx.redis.lrem(this.key, 1, entry.raw)) !== 0;
  }

  /** Finds the job by jid and deletes it; false when it is not (or no longer) there. */
  async deleteJob(jid: string): Promise<boolean> {
    const e = await this.findJob(jid);
    return e ? this.delete(e) : false;
  }

  /**
   * `Queue#clear`: SREM queues <name>, then UNLINK queue:<name>. Ruby sends the two
   * in a MULTI, which Redis at maxmemory refuses whole, and clearing a queue is how
   * an operator frees memory. In this order a push landing between the two is
   * cleared as if it came just before, and an observer at worst sees the queue
   * missing from `queues` a moment early; pipelined, it is one round trip.
   */
  async clear(): Promise<void> {
    execReplies(
      await this.ctx.redis.pipeline().srem(QUEUES_KEY, this.name).unlink(this.key).exec(),
      `clear ${this.key}`,
    );
  }
}
