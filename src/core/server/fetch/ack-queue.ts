// Reliable fetch's acknowledgements: a job is done with once its handler
// returns, and its slot is free at once, so its acknowledgement (HDEL from
// the working hash, LREM from the working list) does not get a round trip of
// its own. It waits here for the next batch fetch of any lane to carry it
// (reliable-fetch.ts), or, after ACK_DELAY_MS without one, goes out in a
// pipeline of its own (sendAcks).
import type { Redis } from "ioredis";
import type { UnitOfWork } from "./fetch.js";
import type { WorkingKeys } from "./working-keys.js";

/**
 * How long finished jobs wait for a fetch to carry their acknowledgement
 * before they are sent on their own: a busy worker fetches again within
 * this, and an idle one can wait.
 */
export const ACK_DELAY_MS = 2;

/** One promise settled for many acknowledgements at once. */
class Settlement {
  resolve!: () => void;
  reject!: (e: Error) => void;
  readonly promise = new Promise<void>((resolve, reject) => {
    this.resolve = resolve;
    this.reject = reject;
  });
}

interface ListAck {
  uow: UnitOfWork;
  settle: Settlement;
}

/**
 * Acknowledgements waiting to be sent, shared by the fetch lanes of a capsule
 * (they share its working lists): whichever lane fetches next carries them.
 * Jobs held in a working hash are acknowledged together (one HDEL per hash,
 * idempotent if retried), so they share one promise; a job in a working list
 * (LREM) has its own.
 */
export class AckQueue {
  fields: UnitOfWork[] = [];
  fieldsSettle: Settlement | undefined;
  listed: ListAck[] = [];
  /**
   * The one flush timer, armed by the first acknowledgement after a take and
   * cleared by the next take: a timer left from acknowledgements a fetch
   * already carried would flush the newer ones early, in a pipeline of their
   * own, where the next fetch would have carried them for nothing.
   */
  timer: NodeJS.Timeout | undefined;

  add(uow: UnitOfWork): Promise<void> {
    if (uow.field === undefined) {
      const settle = new Settlement();
      this.listed.push({ uow, settle });
      return settle.promise;
    }
    this.fields.push(uow);
    return (this.fieldsSettle ??= new Settlement()).promise;
  }

  /** Takes every pending acknowledgement. */
  take(): { fields: UnitOfWork[]; fieldsSettle: Settlement | undefined; listed: ListAck[] } {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const taken = { fields: this.fields, fieldsSettle: this.fieldsSettle, listed: this.listed };
    this.fields = [];
    this.fieldsSettle = undefined;
    this.listed = [];
    return taken;
  }
}

export type TakenAcks = ReturnType<AckQueue["take"]>;

/** Settles taken acknowledgements all at once: all made, or all failed with `e` (a batch fetch, a pipeline that failed whole). */
export function settleAcks(acks: TakenAcks, e?: Error): void {
  for (const a of acks.listed)
    if (e) a.settle.reject(e);
    else a.settle.resolve();
  if (e) acks.fieldsSettle?.reject(e);
  else acks.fieldsSettle?.resolve();
}

/**
 * Sends taken acknowledgements on their own, in one pipeline: an LREM per
 * job of a working list, one HDEL per working hash. Each job of a working
 * list settles with its own command; the hashes' jobs with the first error
 * of any HDEL.
 */
export function sendAcks(redis: Redis, keys: WorkingKeys, acks: TakenAcks): void {
  const { fields, fieldsSettle, listed } = acks;
  if (fields.length === 0 && listed.length === 0) return;
  const pipe = redis.pipeline();
  for (const a of listed) pipe.lrem(keys.list(a.uow.queue), 1, a.uow.raw);
  const byHash = new Map<string, Array<string | undefined>>();
  for (const u of fields) {
    const key = keys.hash(u.queue);
    const group = byHash.get(key);
    if (group) group.push(u.field);
    else byHash.set(key, [u.field]);
  }
  for (const [key, group] of byHash) pipe.hdel(key, ...(group as string[]));
  pipe.exec().then(
    (res) => {
      const err = (i: number) => (res ? res[i]?.[0] : new Error("pipeline discarded"));
      listed.forEach((a, i) => {
        const e = err(i);
        if (e) a.settle.reject(e);
        else a.settle.resolve();
      });
      let failed: Error | null | undefined;
      for (let i = listed.length; i < listed.length + byHash.size; i++) failed ??= err(i);
      if (failed) fieldsSettle?.reject(failed);
      else fieldsSettle?.resolve();
    },
    (e: Error) => settleAcks(acks, e),
  );
}
