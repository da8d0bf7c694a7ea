// Sidekiq's top-level payload keys, spelled once, each with who writes it.
// Sidekiq keeps no one list: the nearest is the Web UI's RETRY_JOB_KEYS
// (lib/sidekiq/web/helpers.rb, the keys it shows itself, the same from 6.5 to
// 8.0); the others are written where each group below cites (lib/sidekiq in
// 6.4 to 8.1). The payload scanner interns them, the audit tells them from
// middleware's keys, and sidekiq-throttled's requeue drops the ones a new push
// makes anew.

/** Who writes a key, which is what decides whether a new push of the job carries it. */
export type PayloadKeyWriter =
  /** The push itself: Client#push's item (client.rb). */
  | "push"
  /** The client, on every push: job_util.rb#normalize_item, client.rb#atomic_push. */
  | "stamp"
  /** A class's sidekiq_options or a push's `set(...)` (job_util.rb#validate, profiler.rb). */
  | "option"
  /** A wrapper class: ActiveJob's adapter, read by api.rb#display_class. */
  | "wrapper"
  /** job_retry.rb, when the job fails. */
  | "retry"
  /** job_retry.rb, when the job dies (8.0.8). */
  | "death"
  /** middleware/current_attributes.rb (`cattr`, then `cattr_<n>`). */
  | "middleware";

/** Sidekiq's top-level payload keys and who writes each: the one list. */
export const SIDEKIQ_PAYLOAD_KEYS = {
  class: "push",
  args: "push",
  queue: "push",
  at: "push",
  jid: "stamp",
  created_at: "stamp",
  enqueued_at: "stamp",
  retry: "option",
  retry_for: "option",
  retry_queue: "option",
  backtrace: "option",
  dead: "option",
  tags: "option",
  log_level: "option",
  profile: "option",
  wrapped: "wrapper",
  display_class: "wrapper",
  retry_count: "retry",
  retried_at: "retry",
  failed_at: "retry",
  error_message: "retry",
  error_class: "retry",
  error_backtrace: "retry",
  discarded_at: "death",
  cattr: "middleware",
} as const satisfies Record<string, PayloadKeyWriter>;

export type SidekiqPayloadKey = keyof typeof SIDEKIQ_PAYLOAD_KEYS;

/** The keys of the list, in its order (the scanner interns them in it). */
export const SIDEKIQ_PAYLOAD_KEY_NAMES = Object.keys(SIDEKIQ_PAYLOAD_KEYS) as readonly SidekiqPayloadKey[];

/** The keys some of the writers write. */
export function payloadKeysWrittenBy(...writers: PayloadKeyWriter[]): ReadonlySet<string> {
  return new Set(SIDEKIQ_PAYLOAD_KEY_NAMES.filter((k) => writers.includes(SIDEKIQ_PAYLOAD_KEYS[k])));
}

/** Whether a top-level payload key is Sidekiq's own (CurrentAttributes numbers its second and later `cattr_<n>`). */
export function isSidekiqPayloadKey(key: string): boolean {
  return Object.hasOwn(SIDEKIQ_PAYLOAD_KEYS, key) || /^cattr_\d+$/.test(key);
}
