// sidekiq-scheduler's Redis keys (SidekiqScheduler::RedisManager, 5.0 and
// 6.0 alike), spelled once. `key_prefix` is empty unless the app sets
// `SidekiqScheduler::RedisManager.key_prefix=`; a prefix not ending in `.` or
// `:` gets a `:` appended, as the gem's setter does.

/** How long `sidekiq-scheduler:pushed:<name>` remembers enqueues (REGISTERED_JOBS_THRESHOLD_IN_SECONDS). */
export const PUSHED_TTL_SECONDS = 24 * 60 * 60;

/** The gem's key names under one prefix. */
export interface SchedulerKeys {
  /** HASH name -> the schedule's JSON config (`schedules_key`). */
  schedules: string;
  /** ZSET name -> float epoch of its last change (`schedules_changed_key`). */
  schedulesChanged: string;
  /** HASH name -> `{"enabled":bool}`, written when a schedule is toggled (`schedules_state_key`). */
  states: string;
  /** HASH name -> `2026-11-26 14:41:30 +0000`, the last trigger (`last_times_key`). */
  lastTimes: string;
  /** HASH name -> the next trigger, same format (`next_times_key`). */
  nextTimes: string;
  /** ZSET of a schedule's enqueues, member = score = integer epoch: the once-per-instant claim (`pushed_job_key`). */
  pushed(name: string): string;
}

/** The gem's `key_prefix=`: a `:` is appended unless the prefix ends in `.` or `:`. */
function normalizePrefix(prefix: string | undefined): string {
  if (!prefix) return "";
  return /[.:]$/.test(prefix) ? prefix : `${prefix}:`;
}

export function schedulerKeys(prefix?: string): SchedulerKeys {
  const p = normalizePrefix(prefix);
  return {
    schedules: `${p}schedules`,
    schedulesChanged: `${p}schedules_changed`,
    states: `${p}sidekiq-scheduler:states`,
    lastTimes: `${p}sidekiq-scheduler:last_times`,
    nextTimes: `${p}sidekiq-scheduler:next_times`,
    pushed: (name) => `${p}sidekiq-scheduler:pushed:${name}`,
  };
}
