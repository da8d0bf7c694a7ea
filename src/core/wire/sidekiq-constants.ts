// Sidekiq's own constants and Ruby's rules that every layer reads: named once
// here, so the worker, the API and the migration tools cannot drift apart.

/** The class strings of ActiveJob's Sidekiq adapter: Rails' before Sidekiq 8.0, Sidekiq's own from 8.0. */
export const ACTIVEJOB_WRAPPER_CLASSES: ReadonlySet<string> = new Set([
  "Sidekiq::ActiveJob::Wrapper",
  "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
]);

/** `max_retries`: used when a job's `retry` is `true` rather than a number. */
export const DEFAULT_MAX_RETRY_ATTEMPTS = 25;
/** `dead_timeout_in_seconds`: 6 months, in every release. */
export const DEFAULT_DEAD_TIMEOUT_SECONDS = 180 * 24 * 60 * 60;
/** `dead_max_jobs`; a trim leaves one fewer (ZREMRANGEBYRANK 0 -10000 keeps 9,999). */
export const DEFAULT_DEAD_MAX_JOBS = 10_000;

/** Ruby truthiness of a parsed JSON value: everything but nil (absent) and false. */
export function truthy(v: unknown): boolean {
  return v !== undefined && v !== null && v !== false;
}

// ignoreBOM keeps a leading U+FEFF, so the string writes back as the same bytes.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The bytes as a string when they are valid UTF-8, else undefined: Ruby's JSON
 * refuses invalid UTF-8, so such a payload is malformed, never repaired.
 */
export function strictUtf8(b: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(b);
  } catch {
    return undefined;
  }
}
