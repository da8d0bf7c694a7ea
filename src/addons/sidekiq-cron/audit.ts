// What `migrate audit` says about sidekiq-cron: which cron jobs feed a queue,
// whether Node can run the classes they enqueue, and that a cron poller must
// keep running once the last Ruby process (whose sidekiq-cron poller enqueues
// them today) is gone.
import type { Redis } from "ioredis";
import type { AuditCheck, CronFeed } from "../../tools/migration/extension.js";

export type { CronFeed };
import { CronApi } from "./cron-api.js";

/** Cron jobs of every namespace, by the queue they push to. */
export async function cronFeedsByQueue(redis: Redis): Promise<Map<string, CronFeed[]>> {
  const out = new Map<string, CronFeed[]>();
  const { jobs } = await new CronApi({ redis }).list("*");
  for (const j of jobs) {
    const queue = j.queueNameWithPrefix(j.activeJob);
    const list = out.get(queue) ?? [];
    list.push({
      name: j.name,
      namespace: j.namespace,
      cron: j.cron,
      className: j.klass,
      activeJob: j.activeJob,
      enabled: j.enabled,
      errors: j.errors(),
    });
    out.set(queue, list);
  }
  // The set's order is the server's (Redis and Valkey differ): report by name.
  for (const list of out.values())
    list.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
  return out;
}

interface Judged {
  missing: string[];
  reasons: string[];
  warnings: string[];
  verdict: "READY" | "BLOCKED";
}

/**
 * Adds a queue's cron feeds to its verdict: an enabled cron job whose class
 * Node cannot run blocks (its next fire time pushes a job Node fails), and a
 * queue fed by cron is told that a cron poller must outlive Ruby.
 */
export function judgeCronFeeds<T extends Judged>(
  audit: T,
  feeds: readonly CronFeed[],
  handled: (className: string, activeJob: boolean) => boolean,
  liveNodeProcesses: number,
): T & { cron: CronFeed[] } {
  const out = { ...audit, missing: [...audit.missing], reasons: [...audit.reasons], warnings: [...audit.warnings] };
  for (const f of feeds) {
    const label = `sidekiq-cron job "${f.name}"${f.namespace === "default" ? "" : ` (namespace ${f.namespace})`}`;
    if (f.errors.length > 0) {
      out.warnings.push(`${label} is invalid and never fires: ${f.errors.join("; ")}`);
      continue;
    }
    if (handled(f.className, f.activeJob)) continue;
    const cls = f.activeJob ? `${f.className} (ActiveJob)` : f.className;
    if (f.enabled) {
      if (!out.missing.includes(f.className)) out.missing.push(f.className);
      out.reasons.push(`no Node handler for ${cls}, which ${label} enqueues (${f.cron})`);
    } else out.warnings.push(`no Node handler for ${cls} of the disabled ${label}: enabling it would block`);
  }
  const enabled = feeds.filter((f) => f.enabled && f.errors.length === 0);
  if (enabled.length > 0) {
    out.warnings.push(
      `fed by ${enabled.length} sidekiq-cron job(s) (${enabled.map((f) => f.name).join(", ")}): today every Ruby ` +
        "process with sidekiq-cron enqueues them; once the last one stops, only a Node worker's cron poller will " +
        `(on by default, off with --no-cron / cron: false; ${liveNodeProcesses} live Node process(es) now)`,
    );
  }
  return { ...out, verdict: out.missing.length === 0 ? "READY" : "BLOCKED", cron: [...feeds] };
}

/** sidekiq-cron's part of `migrate audit`: the queues its jobs feed, and what they need from Node. */
export const cronAudit: AuditCheck<Map<string, CronFeed[]>> = {
  prepare: cronFeedsByQueue,
  queues: (feeds) => feeds.keys(),
  judgeQueue(audit, feeds, ctx) {
    const mine = feeds.get(audit.queue);
    return mine ? judgeCronFeeds(audit, mine, ctx.handled, ctx.liveNodeProcesses) : audit;
  },
};
