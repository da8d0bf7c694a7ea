// The jobs running in this process, in one place: Sidekiq's work state
// (Processor::WORK_STATE, which the launcher's heartbeat reads), and what the
// manager needs to stop them (Sidekiq keeps that apart, in each processor).
// One entry per job from the moment it takes a slot until its acknowledgement
// (or requeue) is written; while the processor runs it (from admission to the
// end of its handler) it is busy, and the heartbeat writes it to the work hash.
// The launcher owns it and hands it to its managers and its heartbeat; the
// processor marks the entry it runs.
import type { Capsule } from "./capsule.js";
import type { Fetcher, UnitOfWork } from "./fetch/index.js";
import type { WorkEntry } from "./heartbeat.js";
import { LazyAbort } from "./lazy-abort.js";

/** One job in a slot. */
export class Work {
  readonly abort = new LazyAbort();
  /** When it took its slot, epoch ms (the TTIN dump's running time). */
  readonly startedAt = Date.now();
  /** From the parsed job, once the processor has it (none for a malformed payload). */
  jid: string | undefined = undefined;
  /** Epoch seconds at which the processor started running it; undefined while not busy. */
  runAt: number | undefined = undefined;
  /** The handler has finished; only bookkeeping (ack, retry write) remains: a hard stop never requeues it. */
  settled = false;
  /** Its slot is free again. */
  released = false;

  constructor(
    /** Sidekiq's thread id: the field of the work hash, unique in the process. */
    readonly tid: string,
    readonly uow: UnitOfWork,
    /** The fetcher that took it, which acknowledges it or puts it back. */
    readonly fetcher: Fetcher,
    readonly capsule: Capsule,
  ) {}
}

/** What the TTIN dump says of a slot. */
export interface SlotDump {
  tid: string;
  queue: string;
  jid?: string | undefined;
  runningFor: number;
}

export class WorkState {
  private readonly work = new Map<string, Work>();
  private tidSeq = 0;

  /** A job takes a slot: its entry, with a new tid. */
  start(uow: UnitOfWork, fetcher: Fetcher, capsule: Capsule): Work {
    const w = new Work((++this.tidSeq).toString(36), uow, fetcher, capsule);
    this.work.set(w.tid, w);
    return w;
  }

  /** Its bookkeeping is done (or a hard stop handed it back): it leaves. */
  finish(w: Work): void {
    this.work.delete(w.tid);
  }

  /** How many jobs hold a slot of `capsule` (of every capsule without one). */
  count(capsule?: Capsule): number {
    if (capsule === undefined) return this.work.size;
    let n = 0;
    for (const w of this.work.values()) if (w.capsule === capsule) n++;
    return n;
  }

  /** The jobs holding a slot of `capsule`, oldest first. */
  of(capsule: Capsule): Work[] {
    return [...this.work.values()].filter((w) => w.capsule === capsule);
  }

  /** The busy jobs as the heartbeat writes them (Sidekiq's `WORK_STATE.dup`). */
  *busy(): Iterable<WorkEntry> {
    for (const w of this.work.values())
      if (w.runAt !== undefined) yield { tid: w.tid, queue: w.uow.queueName, payload: w.uow.job!, runAt: w.runAt };
  }

  /** What each slot is doing (Sidekiq's TTIN dump), oldest first. */
  dump(): SlotDump[] {
    const now = Date.now();
    return [...this.work.values()].map((w) => ({
      tid: w.tid,
      queue: w.uow.queueName,
      jid: w.jid,
      runningFor: (now - w.startedAt) / 1000,
    }));
  }
}
