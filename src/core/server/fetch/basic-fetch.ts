// Sidekiq's BasicFetch: BRPOP across the capsule's queues with a 2 s timeout;
// a fetched job lives only in this process until done. It takes as many jobs
// as there are free slots in one round trip (BLMPOP), never more: each starts
// at once, as with Sidekiq's one BRPOP per idle processor, so a crash can
// lose no more than Sidekiq's would.
import type { Redis } from "ioredis";
import { queuesCommand, type Capsule } from "../capsule.js";
import { requeuePipelined, FETCH_TIMEOUT_SECONDS, unitOfWork, type Fetcher, type UnitOfWork } from "./fetch.js";
import { isUnknownCommand, type ServerFeatures } from "./server-features.js";

export class BasicFetch implements Fetcher {
  constructor(
    private readonly redis: Redis,
    /** A connection of its own: BRPOP blocks it. */
    private readonly blocking: Redis,
    private readonly capsule: Capsule,
    private readonly features: ServerFeatures,
  ) {}

  async retrieveWork(max: number): Promise<UnitOfWork[]> {
    const queues = queuesCommand(this.capsule);
    if (max > 1 && this.features.lmpop) {
      // BLMPOP takes from the first non-empty queue in the same order BRPOP would,
      // from the same end, up to `max` jobs.
      try {
        const r = (await this.blocking.callBuffer(
          "blmpop",
          FETCH_TIMEOUT_SECONDS,
          queues.length,
          ...queues,
          "RIGHT",
          "COUNT",
          max,
        )) as [Buffer, Buffer[]] | null;
        if (!r) return [];
        const queue = r[0].toString();
        return r[1].map((raw) => unitOfWork(queue, raw));
      } catch (e) {
        if (!isUnknownCommand(e)) throw e;
        this.features.lmpop = false; // a server that claims 7.0 but lacks it (a proxy, a clone)
      }
    }
    const r = await this.blocking.brpopBuffer(...queues, FETCH_TIMEOUT_SECONDS);
    return r ? [unitOfWork(r[0].toString(), r[1])] : [];
  }

  async acknowledge(): Promise<void> {}

  bulkRequeue(work: readonly UnitOfWork[]): Promise<void> {
    return requeuePipelined(this.redis, work);
  }

  async handBack(uow: UnitOfWork): Promise<void> {
    await this.redis.lpush(uow.queue, uow.raw);
  }

  async close(): Promise<void> {}
}
