// sidekiq-throttled's Redis keys, spelled once. A strategy's name is the job
// class (`sidekiq_throttle`) or a shared name (`sidekiq_throttle_as`);
// `key_suffix` adds `:<suffix>` to each key (strategy/base.rb#key). The
// backlog hash is 2.1.0's.

/** Every key the gem writes starts with this. */
const THROTTLED_PREFIX = "throttled:";

/** The key of a strategy's part, with its suffix when it has one (strategy/base.rb#key). */
function keyOf(name: string, part: string, suffix: string | undefined): string {
  const base = `${THROTTLED_PREFIX}${name}:${part}`;
  return suffix === undefined ? base : `${base}:${suffix}`;
}

/** The zset of jobs holding a concurrency slot: jid -> expiry (epoch s). */
export function concurrencyKey(name: string, suffix?: string): string {
  return keyOf(name, "concurrency.v2", suffix);
}

/** 2.1.0's hash beside it: `size` (estimated backlog) and `timestamp`. */
export function backlogInfoKey(name: string, suffix?: string): string {
  return `${concurrencyKey(name, suffix)}.backlog_info`;
}

/** The list of recent start times (epoch s), newest first, trimmed to the limit. */
export function thresholdKey(name: string, suffix?: string): string {
  return keyOf(name, "threshold", suffix);
}

/** The SCAN pattern for every key of the gem. */
export const THROTTLED_PATTERN = `${THROTTLED_PREFIX}*`;

/**
 * The strategy name a gem key belongs to, or undefined for a key that is not
 * one of the gem's: `throttled:PartnerApiJob:concurrency.v2[:suffix][.backlog_info]`
 * and `throttled:PartnerApiJob:threshold[:suffix]`. Class names hold `::`, so
 * the name is everything before the last `:concurrency.v2` or `:threshold` part.
 */
export function strategyNameOf(key: string): string | undefined {
  if (!key.startsWith(THROTTLED_PREFIX)) return undefined;
  const rest = key.slice(THROTTLED_PREFIX.length);
  const m = /^(.+?):(?:concurrency\.v2|threshold)(?::.*)?$/.exec(rest);
  return m?.[1];
}
