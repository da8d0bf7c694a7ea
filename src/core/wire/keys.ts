// Sidekiq's own Redis keys, spelled once. Every layer (client, server, API,
// migration, web) names a key through these, so a reader finds every use of
// `queue:<name>` or `stat:processed` by following one definition. The
// execution metrics' keys are in metrics-keys.ts, the bridge's own keys in
// bridge-keys.ts; each add-on spells its keys in its own folder. Sidekiq names them in lib/sidekiq/{client,api,launcher}.rb.

/** The set of every queue name ever pushed to (`SADD queues`). */
export const QUEUES_KEY = "queues";
/** The prefix of a queue's list. */
export const QUEUE_PREFIX = "queue:";
/** The sorted set of jobs to run later (perform_in / perform_at). */
export const SCHEDULE_KEY = "schedule";
/** The sorted set of failed jobs waiting for their next attempt. */
export const RETRY_KEY = "retry";
/** The morgue: jobs out of retries. */
export const DEAD_KEY = "dead";
/** The three sorted sets of jobs, in the order jobs pass through them. */
export const JOB_SET_KEYS = [SCHEDULE_KEY, RETRY_KEY, DEAD_KEY] as const;
/** The key of a sorted set of jobs: `schedule`, `retry` or `dead`. */
export type JobSetKey = (typeof JOB_SET_KEYS)[number];
/** The set of live process identities (their heartbeats). */
export const PROCESSES_KEY = "processes";
/** Sidekiq Pro's paused queues, read by the API and the Web UI. */
export const PAUSED_KEY = "paused";
/** `ProcessSet#cleanup`'s lock (SET NX EX 60, 6.5.2+): one cleanup a minute across the fleet. */
export const PROCESS_CLEANUP_KEY = "process_cleanup";
/** All-time counters. */
export const STAT_PROCESSED_KEY = "stat:processed";
export const STAT_FAILED_KEY = "stat:failed";
/** Every counter, all-time and daily (a SCAN pattern). */
export const STAT_KEYS_PATTERN = "stat:*";

/** `queue:<name>`: a queue's list. */
export function queueKey(name: string): string {
  return QUEUE_PREFIX + name;
}

/** The queue's name from its list key (`queue:default` -> `default`). */
export function queueNameOf(key: string): string {
  return key.startsWith(QUEUE_PREFIX) ? key.slice(QUEUE_PREFIX.length) : key;
}

/** `<identity>:work`: the hash of what a process is running (`<identity>:workers` before 6.4.2). */
export function workKey(identity: string, name: "work" | "workers" = "work"): string {
  return `${identity}:${name}`;
}

/** `<identity>-signals`: the list a process pops remote signals (TSTP, TERM, TTIN) from. */
export function signalsKey(identity: string): string {
  return `${identity}-signals`;
}

/** The day of a daily counter: `Time.now.utc.strftime("%Y-%m-%d")`. */
export function statsDate(now: number | Date): string {
  const d = now instanceof Date ? now : new Date(now);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")}`;
}

/** `stat:processed:<YYYY-MM-DD>` and `stat:failed:<YYYY-MM-DD>`: daily counters (UTC date). */
export function dailyStatKeys(date: string): { processed: string; failed: string } {
  return { processed: `${STAT_PROCESSED_KEY}:${date}`, failed: `${STAT_FAILED_KEY}:${date}` };
}

/** `it-<jid>`: an IterableJob's cursor and counters (Sidekiq 7.3+). */
export function iterationKey(jid: string): string {
  return `it-${jid}`;
}
