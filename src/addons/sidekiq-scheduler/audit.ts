// What `migrate audit` says about sidekiq-scheduler: which schedules feed a
// queue, whether Node can run the classes they enqueue, and that a scheduler
// must keep running once the last Ruby process (whose sidekiq-scheduler
// enqueues them today) is gone.
import type { Redis } from "ioredis";
import type { AuditCheck, QueueAudit } from "../../tools/migration/extension.js";
import { SchedulerApi } from "./scheduler-api.js";
import { entryProblems, intervalOf, type ScheduleEntry } from "./schedule-entry.js";

export interface ScheduleFeed {
  name: string;
  interval: string;
  className?: string;
  enabled: boolean;
  problems: string[];
}

/** The schedules of the `schedules` hash, by the queue they push to. */
async function scheduleFeedsByQueue(redis: Redis): Promise<Map<string, ScheduleFeed[]>> {
  const api = new SchedulerApi({ redis });
  const { entries } = await api.list();
  const out = new Map<string, ScheduleFeed[]>();
  const now = Date.now();
  for (const e of entries) {
    let enabled: boolean;
    try {
      enabled = await api.isEnabled(e);
    } catch {
      enabled = e.enabledInConfig;
    }
    const list = out.get(e.queue) ?? [];
    list.push(feedOf(e, enabled, now));
    out.set(e.queue, list);
  }
  return out;
}

function feedOf(e: ScheduleEntry, enabled: boolean, now: number): ScheduleFeed {
  return {
    name: e.name,
    interval: intervalOf(e),
    ...(e.className ? { className: e.className } : {}),
    enabled,
    problems: entryProblems(e, now),
  };
}

/** Adds a queue's schedules to its verdict: an enabled one whose class Node cannot run blocks. */
function judgeScheduleFeeds(
  audit: QueueAudit,
  feeds: readonly ScheduleFeed[],
  handled: (className: string, activeJob: boolean) => boolean,
  liveNodeProcesses: number,
): QueueAudit {
  const out = { ...audit, missing: [...audit.missing], reasons: [...audit.reasons], warnings: [...audit.warnings] };
  for (const f of feeds) {
    const label = `sidekiq-scheduler schedule "${f.name}"`;
    if (f.problems.length > 0) {
      out.warnings.push(`${label} never fires: ${f.problems.join("; ")}`);
      continue;
    }
    const cls = f.className!;
    if (handled(cls, false) || handled(cls, true)) continue;
    if (f.enabled) {
      if (!out.missing.includes(cls)) out.missing.push(cls);
      out.reasons.push(`no Node handler for ${cls}, which ${label} enqueues (${f.interval})`);
    } else out.warnings.push(`no Node handler for ${cls} of the disabled ${label}: enabling it would block`);
  }
  const live = feeds.filter((f) => f.enabled && f.problems.length === 0);
  if (live.length > 0)
    out.warnings.push(
      `fed by ${live.length} sidekiq-scheduler schedule(s) (${live.map((f) => f.name).join(", ")}): today every Ruby ` +
        "process with sidekiq-scheduler enqueues them; once the last one stops, only a Node worker's scheduler will " +
        `(on by default, off with --no-sidekiq-scheduler / sidekiqScheduler: false; ${liveNodeProcesses} live Node process(es) now)`,
    );
  return { ...out, verdict: out.missing.length === 0 ? "READY" : "BLOCKED" };
}

/** sidekiq-scheduler's part of `migrate audit`. */
export const schedulerAudit: AuditCheck<Map<string, ScheduleFeed[]>> = {
  prepare: scheduleFeedsByQueue,
  queues: (feeds) => feeds.keys(),
  judgeQueue(audit, feeds, ctx) {
    const mine = feeds.get(audit.queue);
    return mine ? judgeScheduleFeeds(audit, mine, ctx.handled, ctx.liveNodeProcesses) : audit;
  },
};
