// What `migrate audit` reports, and what it judges by: the types the audit,
// the add-ons' audit checks (audit-check.ts) and the CLI share.

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
