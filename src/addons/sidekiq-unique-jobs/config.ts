// What Node needs to know about the fleet's sidekiq-unique-jobs setup: the
// gem's major version (8 and 9 keep locks under different keys) and the
// settings its `SidekiqUniqueJobs.config` holds in Ruby.
import type { Logger } from "../../core/logging/logger.js";
import { consoleLogger } from "../../core/logging/logger.js";
import type { JobRecord } from "../../core/wire/job-record.js";
import { DEFAULT_LOCK_PREFIX, type DigestAlgorithm, type JsonFloats } from "./digest.js";

/** sidekiq-unique-jobs settings: gem version (8 or 9), digest algorithm, lock prefix, float spelling. */
export interface UniqueJobsOptions {
  /** The sidekiq-unique-jobs major version the Ruby fleet runs (default 8). */
  gem?: 8 | 9;
  /** `config.lock_prefix` (default "uniquejobs"). */
  lockPrefix?: string;
  /** `config.digest_algorithm` (default "legacy": MD5). */
  digestAlgorithm?: DigestAlgorithm;
  /** How the fleet's Ruby `json` spells floats in digests (default "to_s"; "fpconv" for json 2.10+). */
  jsonFloats?: JsonFloats;
  /** `config.max_history`: changelog entries kept (default 1000; 0 turns the changelog off). Gem 8 only. */
  maxHistory?: number;
  /** `config.lock_info` (default false): write `<digest>:INFO`. Gem 8 only. */
  lockInfo?: boolean;
  /** `config.lock_timeout` in seconds (default 0). */
  lockTimeout?: number;
  /** `config.lock_ttl` in seconds (default none). */
  lockTtl?: number | null;
  /** Like a Ruby class's `after_unlock`: called after Node released a job's lock. */
  afterUnlock?: (job: JobRecord) => void | Promise<void>;
  logger?: Logger;
}

export interface UniqueJobsConfig {
  gem: 8 | 9;
  lockPrefix: string;
  digestAlgorithm: DigestAlgorithm;
  jsonFloats: JsonFloats;
  maxHistory: number;
  lockInfo: boolean;
  lockTimeout: number;
  lockTtl: number | null;
  afterUnlock?: (job: JobRecord) => void | Promise<void>;
  logger: Logger;
}

export function resolveConfig(o: UniqueJobsOptions = {}): UniqueJobsConfig {
  return {
    gem: o.gem ?? 8,
    lockPrefix: o.lockPrefix ?? DEFAULT_LOCK_PREFIX,
    digestAlgorithm: o.digestAlgorithm ?? "legacy",
    jsonFloats: o.jsonFloats ?? "to_s",
    maxHistory: o.maxHistory ?? 1000,
    lockInfo: o.lockInfo ?? false,
    lockTimeout: o.lockTimeout ?? 0,
    lockTtl: o.lockTtl ?? null,
    ...(o.afterUnlock ? { afterUnlock: o.afterUnlock } : {}),
    logger: o.logger ?? consoleLogger(),
  };
}
