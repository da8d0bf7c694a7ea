// The bridge's own Redis keys, spelled once: what reliable fetch and the
// scheduled poller keep while a job is between two of Sidekiq's keys, the
// registries through which recovery finds those of dead processes, and the
// locks recovery runs under. Ruby Sidekiq never reads them. Sidekiq's own
// keys are in keys.ts.
import { QUEUE_PREFIX, RETRY_KEY, SCHEDULE_KEY } from "./keys.js";

const WORKING_LIST_PREFIX = "bridge:wip:";
const WORKING_HASH_PREFIX = "bridge:working:";
const PROMOTING_PREFIX = "bridge:promoting:";

/** The registry of working lists and hashes, so recovery finds those of dead processes. */
export const WORKING_REGISTRY = "bridge:wip-keys";
/** The registry of promoting sets that may hold jobs (scheduled.ts). */
export const PROMOTING_REGISTRY = "bridge:promoting-keys";
/** The lock of the full recovery pass (working lists and hashes, then promoting sets). */
export const RECOVERY_LOCK = "bridge:wip-recovery";
/** The lock of the poller's own, lighter pass (promoting sets only). */
export const PROMOTING_RECOVERY_LOCK = "bridge:promoting-recovery";

/**
 * In-flight claims of the cron and sidekiq-scheduler pollers (src/addons/pollers/claims.ts):
 * a fire time claimed in the gem's set and not yet pushed, field
 * `<kind>|<claim set>|<member>`, value a JSON entry naming its owner.
 */
export const ADDON_CLAIMS = "bridge:addon-claims";

/** The working list of one process for one queue (`queue:<name>`): jobs a one-job fetch took. */
export function wipKey(identity: string, queue: string): string {
  return `${WORKING_LIST_PREFIX}${identity}|${queue}`;
}

/**
 * The working hash of one process for one queue (`queue:<name>`): jobs a
 * batch fetch took, each under a field number unique in the process.
 */
export function workingHashKey(identity: string, queue: string): string {
  return `${WORKING_HASH_PREFIX}${identity}|${queue}`;
}

/** A working hash (not a working list). */
export function isWorkingHashKey(key: string): boolean {
  return key.startsWith(WORKING_HASH_PREFIX);
}

// The identity may hold colons and bars: the queue is what follows the last
// `|queue:` that leaves a name after it.
const OWNER_AND_QUEUE = new RegExp(`^(.+)\\|(${QUEUE_PREFIX}.+)$`);

/**
 * `bridge:wip:<identity>|queue:<name>` (a working list) or
 * `bridge:working:<identity>|queue:<name>` (a working hash) -> [identity, "queue:<name>"].
 */
export function parseWipKey(key: string): [string, string] | undefined {
  const prefix = key.startsWith(WORKING_LIST_PREFIX)
    ? WORKING_LIST_PREFIX
    : isWorkingHashKey(key)
      ? WORKING_HASH_PREFIX
      : undefined;
  const m = prefix === undefined ? null : OWNER_AND_QUEUE.exec(key.slice(prefix.length));
  return m ? [m[1]!, m[2]!] : undefined;
}

/**
 * The sorted set where one process's poller keeps the batch of `retry` or
 * `schedule` it has popped and not yet pushed, each job with its own score.
 */
export function promotingKey(identity: string, set: string): string {
  return `${PROMOTING_PREFIX}${identity}|${set}`;
}

const OWNER_AND_SET = new RegExp(`^(.+)\\|(${RETRY_KEY}|${SCHEDULE_KEY})$`);

/** `bridge:promoting:<identity>|schedule` -> [identity, "schedule"]. */
export function parsePromotingKey(key: string): [string, string] | undefined {
  const m = key.startsWith(PROMOTING_PREFIX) ? OWNER_AND_SET.exec(key.slice(PROMOTING_PREFIX.length)) : null;
  return m ? [m[1]!, m[2]!] : undefined;
}

/** The prefix of an import's staging keys (`migration/restore.ts`): each import writes under its own random one, then renames into place. */
export function importStagingPrefix(random: string): string {
  return `sidekiq-bridge:import:${random}:`;
}
