// What an add-on tells `migrate audit`: what it reads in Redis, what it
// counts on each job, and what it adds to a queue's verdict. audit.ts runs
// the checks of every add-on in the registry (src/assembly/registry.ts) and
// knows none of them by name.
import type { Redis } from "ioredis";
import type { JobRecord } from "../../core/wire/job-record.js";
import type { ClassUsage, NodeHandlers, QueueAudit } from "./audit-report.js";

/** What the Node worker turns on besides its handlers (unique-jobs, iterable classes...). */
export type NodeAddons = Partial<Omit<NodeHandlers, "classes" | "activeJobClasses">>;

/** Where a job was found. */
export type JobPlace = "queued" | "scheduled" | "retry" | "dead";

/** A queue's findings while its classes are judged. */
export interface Findings {
  missing: string[];
  reasons: string[];
  warnings: string[];
}

/** What a check's queue judgement is given. */
export interface QueueJudgeContext {
  /** Whether Node has a handler for a class. */
  handled(className: string, activeJob: boolean): boolean;
  liveNodeProcesses: number;
}

export interface AuditCheck<State = unknown> {
  /** Reads, once and read-only, what the add-on keeps in Redis. */
  prepare?(redis: Redis): Promise<State>;
  /** Queues the add-on feeds that may hold no job yet (they are audited too). */
  queues?(state: State): Iterable<string>;
  /** Sees each `use(...)` of a handlers module, to learn whether the Node worker runs this add-on. */
  onUse?(mw: unknown, into: NodeHandlers): void;
  /** Sees the add-on's option when a handlers module exports it under the add-on's name (and it is not false). */
  onOption?(option: unknown, into: NodeHandlers): void;
  /** Sees the handlers module itself (what it exports besides its handlers). */
  onModule?(moduleExport: unknown, into: NodeHandlers): void;
  /** Sees each `register(name, handler, options)` of a handlers module. */
  onRegister?(className: string, options: unknown, into: NodeHandlers): void;
  /** Sets the add-on's fields on a class's usage when the class is first seen. */
  initUsage?(usage: ClassUsage, handlers: NodeHandlers): void;
  /** Counts what one job carries. */
  countJob?(usage: ClassUsage, record: JobRecord, where: JobPlace): void;
  /** Counts, a page at a time, what needs Redis (read-only): jobs not dead, by jid. */
  countPage?(redis: Redis, jobs: ReadonlyArray<readonly [jid: string, usage: ClassUsage]>): Promise<void>;
  /** Judges one class before the handler check; "decided" skips the rest for that class. */
  judgeClass?(c: ClassUsage, out: Findings, on: NodeAddons): "decided" | undefined;
  /** Adds the add-on's reasons and warnings to a judged queue. */
  judgeQueue?(audit: QueueAudit, state: State, ctx: QueueJudgeContext): QueueAudit;
}
