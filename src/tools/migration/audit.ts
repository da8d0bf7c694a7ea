// `migrate audit`: is Node ready to take a queue? Per queue: the job classes
// present in the queue and in the schedule/retry/dead entries bound for it
// (ActiveJob by `wrapped`), the live processes (Ruby or Node, which version)
// serving it, and whether Node has a handler for every class: READY, or
// BLOCKED with the reasons. Each add-on adds what it knows through its audit
// check (sidekiq-unique-jobs' locks, IterableJob cursors, sidekiq-cron's
// feeds): see extension.ts (AuditCheck). Read-only.
import type { Redis } from "ioredis";
import { auditChecks } from "./audit-checks.js";
import type { JobRecord } from "../../core/wire/job-record.js";
import { queueKey } from "../../core/wire/keys.js";
import type { AuditAddon, AuditCheck, Findings, JobPlace, NodeAddons } from "./extension.js";
import type { AuditReport, ClassUsage, NodeHandlers, ProcessSummary, QueueAudit } from "./extension.js";
import { emptyHandlers } from "./collect-handlers.js";
import { liveProcessSummaries } from "./live-processes.js";
import { unknownKeysAudit } from "./payload-keys.js";
import {
  fingerprint,
  identify,
  JOB_SETS,
  listPages,
  parseRecord,
  queueNames,
  zsetPages,
  type JobSet,
  type ProgressFn,
} from "./stored-jobs.js";

export type { AuditReport, ClassUsage, NodeHandlers, ProcessSummary, QueueAudit, Verdict } from "./extension.js";
export { collectHandlers, emptyHandlers } from "./collect-handlers.js";
export { liveProcessSummaries } from "./live-processes.js";

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

/** Counts the job where it was found, and what each check counts on it. */
function countJob(u: ClassUsage, record: JobRecord, where: JobPlace, checks: readonly AuditCheck[]): void {
  u[where]++;
  for (const check of checks) check.countJob?.(u, record, where);
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

/**
 * What a queue is judged by beyond its classes: dead-only classes block, what
 * Node turns on (add-ons), and the add-ons whose checks judge it too (none:
 * Sidekiq's own rules alone).
 */
export type JudgeOptions = { deadBlocks?: boolean; addons?: readonly AuditAddon[] } & NodeAddons;

/** The verdict for one queue from its classes and processes (pure). */
export function judgeQueue(
  queue: string,
  size: number,
  classes: ClassUsage[],
  processes: readonly ProcessSummary[],
  opts: JudgeOptions = {},
): QueueAudit {
  const out: Findings = { missing: [], reasons: [], warnings: [] };
  const { reasons, warnings, missing } = out;
  const checks = auditChecks(opts.addons ?? []);
  classes: for (const c of classes) {
    for (const check of checks) if (check.judgeClass?.(c, out, opts) === "decided") continue classes;
    const label = c.activeJob ? `${c.name} (ActiveJob)` : c.name;
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

/**
 * Reads the queues and job sets (read-only) and judges every queue, with the
 * checks of `addons` (the worker's add-ons: src/assembly/audits.ts).
 */
export async function auditQueues(redis: Redis, o: AuditOptions, addons: readonly AuditAddon[]): Promise<AuditReport> {
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
  // The add-ons' checks, then the payload keys none of them (nor Sidekiq) writes.
  const checks = [...auditChecks(addons), unknownKeysAudit(addons)];
  const states = await Promise.all(checks.map((c) => (c.prepare ? c.prepare(redis) : Promise.resolve(undefined))));
  if (!only)
    checks.forEach((c, i) => {
      for (const q of c.queues?.(states[i]) ?? []) if (!names.includes(q)) names.push(q);
    });
  const nameSet = new Set(names);

  // queue -> "aj:"/"c:" + class -> usage
  const usage = new Map<string, Map<string, ClassUsage>>();
  const use = (queue: string, name: string, activeJob: boolean): ClassUsage => {
    let m = usage.get(queue);
    if (!m) usage.set(queue, (m = new Map()));
    const k = `${activeJob ? "aj" : "c"}:${name}`;
    let u = m.get(k);
    if (!u) {
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
        }),
      );
      for (const check of checks) check.initUsage?.(u, handlers);
    }
    return u;
  };
  // What the add-ons count in Redis for the jobs of a page (read-only).
  const countPage = async (found: Array<[string, ClassUsage]>) => {
    if (found.length === 0) return;
    for (const check of checks) await check.countPage?.(redis, found);
  };
  const unparseable: Record<string, number> = {};
  const bad = (key: string) => (unparseable[key] = (unparseable[key] ?? 0) + 1);

  let total = 0;
  for (const q of names) total += await redis.llen(queueKey(q));
  for (const s of JOB_SETS) total += await redis.zcard(s);
  let done = 0;
  const tick = (key: string, n: number) => {
    done += n;
    o.progress?.({ phase: "reading", key, done, total: Math.max(total, done) });
  };

  const sizes = new Map<string, number>();
  for (const q of names) {
    const key = queueKey(q);
    sizes.set(q, await redis.llen(key));
    for await (const page of listPages(redis, key, pageSize)) {
      const found: Array<[string, ClassUsage]> = [];
      for (const item of page.items) {
        const p = parseRecord(item);
        const id = p && identify(p.record);
        if (!id) bad(key);
        else {
          const u = use(q, id.className, id.activeJob);
          countJob(u, p.record, "queued", checks);
          if (id.jid) found.push([id.jid, u]);
        }
      }
      await countPage(found);
      tick(key, page.items.length);
    }
  }
  const field: Record<JobSet, "scheduled" | "retry" | "dead"> = { schedule: "scheduled", retry: "retry", dead: "dead" };
  for (const s of JOB_SETS) {
    const seen = new Set<string>(); // ZSCAN may return a member twice
    for await (const page of zsetPages(redis, s, pageSize)) {
      const found: Array<[string, ClassUsage]> = [];
      const track = (u: ClassUsage, record: JobRecord, jid: string | undefined) => {
        countJob(u, record, field[s], checks);
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
      await countPage(found);
      tick(s, page.length);
    }
  }

  const queues = names.sort().map((q) => {
    const classes = [...(usage.get(q)?.values() ?? [])].sort(
      (a, b) => a.name.localeCompare(b.name) || Number(a.activeJob) - Number(b.activeJob),
    );
    const { classes: _c, activeJobClasses: _a, ...on } = handlers;
    let judged = judgeQueue(q, sizes.get(q) ?? 0, classes, processes, {
      ...on,
      deadBlocks: !!o.deadBlocks,
      addons,
    });
    const ctx = {
      handled: (n: string, aj: boolean) => isHandled(handlers, n, aj),
      liveNodeProcesses: processes.filter((p) => p.runtime === "node").length,
    };
    checks.forEach((c, i) => {
      if (c.judgeQueue) judged = c.judgeQueue(judged, states[i], ctx);
    });
    return judged;
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
