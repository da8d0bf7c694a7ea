// Sidekiq's own Redis keys, spelled once. Every layer (client, server, API,
// migration, web) names a key through these, so a reader finds every use of
// `queue:<name>` or `stat:processed` by following one definition. The
// bridge's own keys are in bridge-keys.ts; each add-on spells its keys in its
// own folder. Sidekiq names them in lib/sidekiq/{client,api,launcher}.rb.

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
/** The set of live process identities (their heartbeats). */
export const PROCESSES_KEY = "processes";
/** Sidekiq Pro's paused queues, read by the API and the Web UI. */
export const PAUSED_KEY = "paused";
/** All-time counters. */
export const STAT_PROCESSED_KEY = "stat:processed";
export const STAT_FAILED_KEY = "stat:failed";

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

/** `stat:processed:<YYYY-MM-DD>` and `stat:failed:<YYYY-MM-DD>`: daily counters (UTC date). */
export function dailyStatKeys(date: string): { processed: string; failed: string } {
  return { processed: `${STAT_PROCESSED_KEY}:${date}`, failed: `${STAT_FAILED_KEY}:${date}` };
}

/** `it-<jid>`: an IterableJob's cursor and counters (Sidekiq 7.3+). */
export function iterationKey(jid: string): string {
  return `it-${jid}`;
}
