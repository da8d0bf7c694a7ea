// sidekiq-cron 2.x's Redis keys (Sidekiq::Cron::Job.jobs_key, redis_key,
// job_enqueued_key, jid_history_key). A blank namespace means "default".
export const DEFAULT_NAMESPACE = "default";

/** sidekiq-cron 1.x's un-namespaced set; its poller moves these jobs into the default namespace at start. */
export const LEGACY_JOBS_KEY = "cron_jobs";

const ns = (namespace: string | undefined) =>
  namespace === undefined || namespace === "" ? DEFAULT_NAMESPACE : namespace;

/** SET of every job's hash key in a namespace. */
export const jobsKey = (namespace?: string) => `cron_jobs:${ns(namespace)}`;
/** HASH of one cron job. */
export const jobKey = (name: string, namespace?: string) => `cron_job:${ns(namespace)}:${name}`;
/** ZSET of fire times already enqueued (member: ISO 8601 UTC, score: epoch seconds); the once-per-fire-time lock. */
export const enqueuedKey = (name: string, namespace?: string) => `${jobKey(name, namespace)}:enqueued`;
/** LIST of `{"jid":…,"enqueued":…}`, newest first, trimmed to the history size. */
export const jidHistoryKey = (name: string, namespace?: string) => `${jobKey(name, namespace)}:jid_history`;

/** The namespace of a `cron_jobs:<namespace>` key, as Namespace.all reads it (the last `:` segment). */
export const namespaceOfJobsKey = (key: string) => key.split(":").pop() ?? "";
