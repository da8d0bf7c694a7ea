// sidekiq-unique-jobs' lock digest (its LockDigest, 8.x and 9.x alike):
// `<lock_prefix>:<hex>` where hex is MD5 (`digest_algorithm: :legacy`, the
// default) or SHA3-256 (`:modern`) of `JSON.generate(hash.sort)`, hash being
// the job's class, queue, lock_args (and apartment) as Ruby holds them.
// Ruby's dump of the args equals toRubyJson of the values Node writes, so the
// digest is taken over the same text a Ruby reader re-dumps.
import { createHash } from "node:crypto";
import { fpconvFloat } from "./fpconv.js";
import { RawJson, RubyFloat, toRubyJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";

/** The digest sidekiq-unique-jobs uses for lock digests: MD5 (legacy) or SHA3-256. */
export type DigestAlgorithm = "legacy" | "modern";

/**
 * How the fleet's Ruby `json` writes floats, which the digest depends on:
 * "to_s" (json < 2.10: Float#to_s, `1.0e+20`, `1.0e-05`) or "fpconv"
 * (json 2.10+, e.g. Debian forky's 3.1: `1e+20`, `0.00001`).
 */
export type JsonFloats = "to_s" | "fpconv";

/** The value with every float pre-written the fpconv way. */
function withFpconvFloats(v: RubyJsonValue): RubyJsonValue {
  if (typeof v === "number") return Number.isInteger(v) ? v : new RawJson(fpconvFloat(v));
  if (v instanceof RubyFloat) return new RawJson(fpconvFloat(v.value));
  if (Array.isArray(v)) return v.map(withFpconvFloats);
  if (v !== null && typeof v === "object" && !(v instanceof RawJson)) {
    const out: { [k: string]: RubyJsonValue } = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = withFpconvFloats(x);
    return out;
  }
  return v;
}

/** The gem's default `lock_prefix`. */
export const DEFAULT_LOCK_PREFIX = "uniquejobs";

/** What a lock digest is computed from: class, queue, lock arguments and the gem's options. */
export interface DigestInput {
  class: string;
  queue: string;
  /** The job's lock_args (its args, unless the Ruby class filters them). */
  lockArgs: RubyJsonValue;
  /** Multi-tenant apps (the apartment gem) put the tenant in the digest. */
  apartment?: RubyJsonValue;
  lockPrefix?: string;
  algorithm?: DigestAlgorithm;
  uniqueAcrossQueues?: boolean;
  uniqueAcrossWorkers?: boolean;
  jsonFloats?: JsonFloats;
}

/** The `lock_digest` sidekiq-unique-jobs computes for a job: the same string for the same class, queue and arguments. */
export function lockDigest(input: DigestInput): string {
  // Ruby's Hash#slice(class, queue, lock_args, apartment).sort: [key, value]
  // pairs ordered by key.
  const pairs: [string, RubyJsonValue][] = [];
  if (input.apartment !== undefined) pairs.push(["apartment", input.apartment]);
  if (!input.uniqueAcrossWorkers) pairs.push(["class", input.class]);
  pairs.push(["lock_args", input.jsonFloats === "fpconv" ? withFpconvFloats(input.lockArgs) : input.lockArgs]);
  if (!input.uniqueAcrossQueues) pairs.push(["queue", input.queue]);
  const text = toRubyJson(pairs);
  const hex =
    (input.algorithm ?? "legacy") === "legacy"
      ? createHash("md5").update(text, "utf8").digest("hex")
      : createHash("sha3-256").update(text, "utf8").digest("hex");
  return `${input.lockPrefix ?? DEFAULT_LOCK_PREFIX}:${hex}`;
}
