// `migrate audit`: is Node ready to take a queue? Per queue: the job classes
// present in the queue and in the schedule/retry/dead entries bound for it
// (ActiveJob by `wrapped`), the live processes (Ruby or Node, which version)
// serving it, and whether Node has a handler for every class: READY, or
// BLOCKED with the reasons. A class whose jobs carry a saved IterableJob
// cursor (`it-<jid>`) needs an iterable Node handler. Read-only.
import type { Redis } from "ioredis";
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import { iterationKey } from "../server/iterable-state.js";
import type { ServerMiddleware } from "../server/processor.js";
import { isUniqueJobsMiddleware } from "../unique-jobs/marker.js";
import type { JobRecord } from "../wire/job-record.js";
import { cronFeedsByQueue, judgeCronFeeds, type CronFeed } from "../cron/audit.js";
import {
  fingerprint,
  identify,
  JOB_SETS,
  listPages,
  parseRecord,
  QUEUE_PREFIX,
  queueNames,
  zsetPages,
  type JobSet,
  type ProgressFn,
} from "./stored-jobs.js";

/** The classes Node can run: plain Sidekiq job classes and ActiveJob classes. */
export interface NodeHandlers {
  classes: Set<string>;
  activeJobClasses: Set<string>;
  /** Of `classes`, those registered with registerIterable (IterableJob). */
  iterableClasses?: Set<string>;
  /** The worker runs the sidekiq-unique-jobs middleware (`use(uniqueJobs().middleware)`). */
  uniqueJobs?: boolean;
}

export function emptyHandlers(): NodeHandlers {
  return { classes: new Set(), activeJobClasses: new Set(), iterableClasses: new Set() };
}

/**
 * Records what a handlers module registers, without a Redis connection: the
 * same module shape `sidekiq-bridge worker -r` loads (a default-export
 * function receiving the Worker, or an object of handlers by class name).
 * Calls other than register/registerActiveJob (use, onDeath, ...) are accepted
 * and ignored.
 */
export async function collectHandlers(
  moduleExport: unknown,
  into: NodeHandlers = emptyHandlers(),
): Promise<NodeHandlers> {
  const mod = moduleExport as { default?: unknown } | undefined;
  const exp =
    mod && typeof mod === "object" && "default" in mod && mod.default !== undefined ? mod.default : moduleExport;
  if (typeof exp === "function") {
    const recorder: object = new Proxy(
      {},
      {
        get(_t, prop) {
          if (prop === "register") return (name: unknown) => (into.classes.add(String(name)), recorder);
          if (prop === "registerIterable")
            return (name: unknown) => {
              into.classes.add(String(name));
              (into.iterableClasses ??= new Set()).add(String(name));
              return recorder;
            };
          if (prop === "registerActiveJob")
            return (name: unknown) => (into.activeJobClasses.add(String(name)), recorder);
          if (prop === "use")
            return (mw: unknown) => {
              if (typeof mw === "function" && isUniqueJobsMiddleware(mw as ServerMiddleware)) into.uniqueJobs = true;
              return recorder;
            };
          if (prop === "then") return undefined; // not a thenable
          if (typeof prop === "symbol") return undefined;
          return () => recorder;
        },
      },
    );
    await (exp as (w: unknown) => unknown)(recorder);
  } else if (exp && typeof exp === "object") {
    for (const [name, fn] of Object.entries(exp)) if (typeof fn === "function") into.classes.add(name);
  } else {
    throw new Error("the handlers module exports neither a function nor an object of handlers");
  }
  return into;
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

/** Live processes from `processes` and their hashes (a key without `info` has expired: skipped). */
export async function liveProcessSummaries(redis: Redis): Promise<ProcessSummary[]> {
  const ids = (await redis.smembers("processes")).sort();
  if (ids.length === 0) return [];
  const pipe = redis.pipeline();
  for (const id of ids) pipe.hmget(id, "info", "busy", "beat", "quiet");
  const res = (await pipe.exec()) ?? [];
  const out: ProcessSummary[] = [];
  ids.forEach((identity, i) => {
    const [err, fields] = res[i] ?? [];
    if (err || !Array.isArray(fields)) return;
    const [info, busy, beat, quiet] = fields as Array<string | null>;
    if (typeof info !== "string") return;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(info) as Record<string, unknown>;
    } catch {
      return;
    }
    const labels = Array.isArray(parsed.labels) ? parsed.labels.map(String) : [];
    const queues = Array.isArray(parsed.queues) ? [...new Set(parsed.queues.map(String))] : [];
    out.push({
      identity,
      runtime: labels.includes(BRIDGE_LABEL) ? "node" : "ruby",
      ...(typeof parsed.version === "string" ? { version: parsed.version } : {}),
      ...(typeof parsed.hostname === "string" ? { hostname: parsed.hostname } : {}),
      ...(typeof parsed.pid === "number" ? { pid: parsed.pid } : {}),
      ...(typeof parsed.tag === "string" && parsed.tag !== "" ? { tag: parsed.tag } : {}),
      queues,
      labels,
      quiet: quiet === "true",
      ...(busy !== null && busy !== undefined ? { busy: Number(busy) } : {}),
      ...(beat !== null && beat !== undefined ? { beat: Number(beat) } : {}),
    });
  });
  return out;
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

/** Options of `auditQueues`: the queues, and the Node handlers to judge them by. */
export interface AuditOptions {
  /** Queues to report (default: every queue known to Redis or served by a live process). */
  queues?: string[];
  /** What Node handles. Classes listed in `classes` also cover ActiveJob jobs of that name. */
  handlers?: NodeHandlers;
  /** Classes only found in the dead set block too (default: they are warnings). */
  deadBlocks?: boolean;
  pageSize?: number;
  progress?: ProgressFn;
}

/** Counts the job, and its sidekiq-unique-jobs lock unless it is dead (a dead job's lock is gone). */
function countLock(u: ClassUsage, record: JobRecord, where: "queued" | "scheduled" | "retry" | "dead"): void {
  u[where]++;
  const lock = record.get("lock");
  if (where === "dead" || lock === undefined || lock === null || lock === false) return;
  u.locks ??= {};
  u.locks[String(lock)] = (u.locks[String(lock)] ?? 0) + 1;
}

function isHandled(h: NodeHandlers, name: string, activeJob: boolean): boolean {
  return activeJob ? h.activeJobClasses.has(name) || h.classes.has(name) : h.classes.has(name);
}

function describeCounts(u: ClassUsage): string {
  const parts: string[] = [];
  if (u.queued) parts.push(`${u.queued} queued`);
  if (u.scheduled) parts.push(`${u.scheduled} scheduled`);
  if (u.retry) parts.push(`${u.retry} in retry`);
  if (u.dead) parts.push(`${u.dead} dead`);
  return parts.join(", ");
}

/** The verdict for one queue from its classes and processes (pure). */
export function judgeQueue(
  queue: string,
  size: number,
  classes: ClassUsage[],
  processes: readonly ProcessSummary[],
  opts: { deadBlocks?: boolean; uniqueJobs?: boolean } = {},
): QueueAudit {
  const reasons: string[] = [];
  const warnings: string[] = [];
  const missing: string[] = [];
  for (const c of classes) {
    if (c.locks && !opts.uniqueJobs) {
      const kinds = Object.entries(c.locks)
        .map(([t, n]) => `${n} with lock: ${t}`)
        .join(", ");
      reasons.push(
        `${c.name} jobs carry sidekiq-unique-jobs locks (${kinds}) but the Node worker does not run the unique-jobs middleware: their locks would never be released and later pushes rejected as duplicates (turn on uniqueJobs)`,
      );
    }
    const label = c.activeJob ? `${c.name} (ActiveJob)` : c.name;
    if (c.iterating && !c.iterableHandler) {
      const saved = `${c.iterating} job(s) with a saved IterableJob cursor (it-<jid>)`;
      if (c.handled) {
        // A plain handler would run them from the first item again and leave the state behind.
        missing.push(c.name);
        reasons.push(`${label} has ${saved} but its Node handler is not iterable: register it with registerIterable`);
        continue;
      }
      warnings.push(`${label} is an IterableJob (${saved}): its Node handler must use registerIterable`);
    }
    if (c.handled) continue;
    const live = c.queued + c.scheduled + c.retry;
    if (live > 0 || opts.deadBlocks) {
      if (!missing.includes(c.name)) missing.push(c.name);
      reasons.push(`no Node handler for ${label} (${describeCounts(c)})`);
    } else {
      warnings.push(
        `no Node handler for ${label}, found only in the dead set (${c.dead}): retrying it by hand while Node owns the queue would fail it again`,
      );
    }
  }
  const servedBy = processes
    .filter((p) => p.queues.includes(queue))
    .map((p) => ({
      identity: p.identity,
      runtime: p.runtime,
      ...(p.version !== undefined ? { version: p.version } : {}),
      ...(p.hostname !== undefined ? { hostname: p.hostname } : {}),
      ...(p.pid !== undefined ? { pid: p.pid } : {}),
      quiet: p.quiet,
    }));
  if (classes.length === 0)
    warnings.push("no jobs seen in the queue or in schedule/retry/dead: the verdict covers only classes present now");
  if (servedBy.length === 0) warnings.push("no live process serves this queue");
  const nodeServing = servedBy.filter((p) => p.runtime === "node" && !p.quiet);
  if (nodeServing.length > 0 && missing.length > 0) {
    warnings.push(
      `${nodeServing.length} live Node process(es) already serve this queue and will fail the classes above with NameError (or requeue them)`,
    );
  }
  return {
    queue,
    size,
    classes,
    servedBy,
    missing,
    verdict: reasons.length === 0 ? "READY" : "BLOCKED",
    reasons,
    warnings,
  };
}

/** Reads the queues and job sets (read-only) and judges every queue. */
export async function auditQueues(redis: Redis, o: AuditOptions = {}): Promise<AuditReport> {
  const started = Date.now();
  const handlers = o.handlers ?? emptyHandlers();
  const pageSize = o.pageSize ?? 1000;
  const processes = await liveProcessSummaries(redis);
  const only = o.queues?.length ? new Set(o.queues) : undefined;
  const names = only
    ? [...only].sort()
    : await queueNames(
        redis,
        processes.flatMap((p) => p.queues),
      );
  const cron = await cronFeedsByQueue(redis);
  if (!only) for (const q of cron.keys()) if (!names.includes(q)) names.push(q);
  const nameSet = new Set(names);

  // queue -> "aj:"/"c:" + class -> usage
  const usage = new Map<string, Map<string, ClassUsage>>();
  const use = (queue: string, name: string, activeJob: boolean): ClassUsage => {
    let m = usage.get(queue);
    if (!m) usage.set(queue, (m = new Map()));
    const k = `${activeJob ? "aj" : "c"}:${name}`;
    let u = m.get(k);
    if (!u)
      m.set(
        k,
        (u = {
          name,
          activeJob,
          queued: 0,
          scheduled: 0,
          retry: 0,
          dead: 0,
          handled: isHandled(handlers, name, activeJob),
          iterating: 0,
          iterableHandler: !activeJob && !!handlers.iterableClasses?.has(name),
        }),
      );
    return u;
  };
  // IterableJob state of the jobs of a page, counted on their class (read-only EXISTS).
  const countIterating = async (found: Array<[string, ClassUsage]>) => {
    if (found.length === 0) return;
    const pipe = redis.pipeline();
    for (const [jid] of found) pipe.exists(iterationKey(jid));
    const res = (await pipe.exec()) ?? [];
    found.forEach(([, u], i) => {
      if (res[i]?.[1] === 1) u.iterating = (u.iterating ?? 0) + 1;
    });
  };
  const unparseable: Record<string, number> = {};
  const bad = (key: string) => (unparseable[key] = (unparseable[key] ?? 0) + 1);

  let total = 0;
  for (const q of names) total += await redis.llen(QUEUE_PREFIX + q);
  for (const s of JOB_SETS) total += await redis.zcard(s);
  let done = 0;
  const tick = (key: string, n: number) => {
    done += n;
    o.progress?.({ phase: "reading", key, done, total: Math.max(total, done) });
  };

  const sizes = new Map<string, number>();
  for (const q of names) {
    const key = QUEUE_PREFIX + q;
    sizes.set(q, await redis.llen(key));
    for await (const page of listPages(redis, key, pageSize)) {
      const found: Array<[string, ClassUsage]> = [];
      for (const item of page.items) {
        const p = parseRecord(item);
        const id = p && identify(p.record);
        if (!id) bad(key);
        else {
          const u = use(q, id.className, id.activeJob);
          countLock(u, p.record, "queued");
          if (id.jid) found.push([id.jid, u]);
        }
      }
      await countIterating(found);
      tick(key, page.items.length);
    }
  }
  const field: Record<JobSet, "scheduled" | "retry" | "dead"> = { schedule: "scheduled", retry: "retry", dead: "dead" };
  for (const s of JOB_SETS) {
    const seen = new Set<string>(); // ZSCAN may return a member twice
    for await (const page of zsetPages(redis, s, pageSize)) {
      const found: Array<[string, ClassUsage]> = [];
      const track = (u: ClassUsage, record: JobRecord, jid: string | undefined) => {
        countLock(u, record, field[s]);
        if (jid && s !== "dead") found.push([jid, u]);
      };
      for (const { member } of page) {
        const fp = fingerprint(member);
        if (seen.has(fp)) continue;
        seen.add(fp);
        const p = parseRecord(member);
        const id = p && identify(p.record);
        if (!id) bad(s);
        else if (id.queue !== undefined && nameSet.has(id.queue))
          track(use(id.queue, id.className, id.activeJob), p.record, id.jid);
        else if (id.queue !== undefined && !only) {
          // A set entry bound for a queue with no list and no `queues` entry yet: audit it too.
          nameSet.add(id.queue);
          names.push(id.queue);
          sizes.set(id.queue, 0);
          track(use(id.queue, id.className, id.activeJob), p.record, id.jid);
        }
      }
      await countIterating(found);
      tick(s, page.length);
    }
  }

  const queues = names.sort().map((q) => {
    const classes = [...(usage.get(q)?.values() ?? [])].sort(
      (a, b) => a.name.localeCompare(b.name) || Number(a.activeJob) - Number(b.activeJob),
    );
    const judged = judgeQueue(q, sizes.get(q) ?? 0, classes, processes, {
      deadBlocks: !!o.deadBlocks,
      uniqueJobs: !!handlers.uniqueJobs,
    });
    const feeds = cron.get(q);
    if (!feeds) return judged;
    const nodes = processes.filter((p) => p.runtime === "node").length;
    return judgeCronFeeds(judged, feeds, (n, aj) => isHandled(handlers, n, aj), nodes);
  });
  return {
    queues,
    processes,
    node: {
      classes: [...handlers.classes].sort(),
      activeJobClasses: [...handlers.activeJobClasses].sort(),
      iterableClasses: [...(handlers.iterableClasses ?? [])].sort(),
      processes: processes.filter((p) => p.runtime === "node"),
    },
    unparseable,
    scanned: done,
    durationMs: Date.now() - started,
  };
}
