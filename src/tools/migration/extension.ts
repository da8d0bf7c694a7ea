// What `migrate audit` and its checks share: the one module of the
// migration tool an add-on imports (docs/ADDONS.md). An add-on's check
// (AuditCheck) counts what it needs on each job and class and judges
// classes and queues with these records; an add-on's own fields on
// NodeHandlers and ClassUsage are declared by the add-on
// (`declare module ".../tools/migration/extension.js"`). audit.ts runs the
// checks it is given (AuditAddon: src/assembly/audits.ts hands it every
// add-on's) and knows none of them by name.
import type { Redis } from "ioredis";
import type { JobRecord } from "../../core/wire/job-record.js";

/** A sidekiq-cron job that pushes to a queue, as the report lists it (see src/addons/sidekiq-cron/audit.ts). */
export interface CronFeed {
  name: string;
  namespace: string;
  cron: string;
  /** The class it enqueues (the ActiveJob class when `activeJob`). */
  className: string;
  activeJob: boolean;
  enabled: boolean;
  /** The job cannot be run by any poller (bad cron, missing class...). */
  errors: string[];
}

/** The classes Node can run: plain Sidekiq job classes and ActiveJob classes. */
export interface NodeHandlers {
  classes: Set<string>;
  activeJobClasses: Set<string>;
  /** Of `classes`, those registered with registerIterable (IterableJob). */
  iterableClasses?: Set<string>;
  /** The worker runs the sidekiq-unique-jobs middleware (`use(uniqueJobs().middleware)`). */
  uniqueJobs?: boolean;
}

export interface ProcessSummary {
  identity: string;
  runtime: "ruby" | "node";
  /** `info.version` (6.x writes none); a Node process's reads e.g. `8.1.7-sidekiq-bridge.0.1.0`. */
  version?: string;
  hostname?: string;
  pid?: number;
  tag?: string;
  queues: string[];
  labels: string[];
  /** Quiet processes fetch nothing: they no longer serve their queues. */
  quiet: boolean;
  busy?: number;
  /** Last heartbeat, epoch seconds. */
  beat?: number;
}

export interface ClassUsage {
  /** The routing class (`wrapped` for ActiveJob). */
  name: string;
  activeJob: boolean;
  queued: number;
  scheduled: number;
  retry: number;
  dead: number;
  /** Node has a handler for it. */
  handled: boolean;
  /** Jobs of it (queued, scheduled, retry) with a saved IterableJob cursor in `it-<jid>`. */
  iterating?: number;
  /** Node's handler for it is iterable (registerIterable). */
  iterableHandler?: boolean;
  /** Jobs (queued, scheduled, in retry) in a Sidekiq Pro batch (carrying a `bid`). */
  batches?: number;
  /** Top-level payload keys neither Sidekiq nor a known add-on writes, with how many jobs carry each. */
  unknownKeys?: Record<string, number>;
  /** Jobs (queued, scheduled, in retry) carrying a sidekiq-unique-jobs `lock`, by lock type. */
  locks?: Record<string, number>;
}

/** Whether Node can take a queue: READY, or BLOCKED with the reasons. */
export type Verdict = "READY" | "BLOCKED";

/** The audit of one queue: the job classes waiting in it, in the retry and scheduled sets, and which have a Node handler. */
export interface QueueAudit {
  queue: string;
  /** Jobs in `queue:<name>` now. */
  size: number;
  classes: ClassUsage[];
  /** Live processes whose heartbeat lists this queue. */
  servedBy: Array<Pick<ProcessSummary, "identity" | "runtime" | "version" | "hostname" | "pid" | "quiet">>;
  /** Classes that block Node from taking the queue. */
  missing: string[];
  verdict: Verdict;
  reasons: string[];
  warnings: string[];
  /** sidekiq-cron jobs that push to this queue. */
  cron?: CronFeed[];
}

/** The audit of the queues asked for, with the live processes. */
export interface AuditReport {
  queues: QueueAudit[];
  processes: ProcessSummary[];
  node: {
    classes: string[];
    activeJobClasses: string[];
    /** Classes Node runs as IterableJob (registerIterable). */
    iterableClasses: string[];
    /** Live sidekiq-bridge processes. */
    processes: ProcessSummary[];
  };
  /** Payloads that are not job objects, by key. */
  unparseable: Record<string, number>;
  scanned: number;
  durationMs: number;
}

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

/**
 * An add-on as `migrate audit` sees it: its name (the option a handlers
 * module exports to turn it on), its check, and the top-level payload keys
 * the gem writes (so they are not reported as unknown). The audit takes them
 * as an argument; it imports no add-on.
 */
export interface AuditAddon {
  readonly name: string;
  readonly check?: AuditCheck | undefined;
  readonly payloadKeys: readonly string[];
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
