// Wire dialects: the generations of Sidekiq whose Redis formats differ.
// A dialect names the major version; a profile pins the exact release,
// because a few details moved inside a major (work key in 6.4.2, strict base64
// in 7.2.1). What changed in which release is defined in release-rules.ts.
import { releaseRules } from "./release-rules.js";

export { versionAtLeast } from "./release-rules.js";

/** A wire dialect: 6, 7 or 8 (float-second timestamps before 8, integer milliseconds from 8). */
export type Dialect = 6 | 7 | 8;
/** The wire dialects: Sidekiq 6, 7 and 8. */
export const DIALECTS: readonly Dialect[] = [6, 7, 8];

/** Record kinds that have a schema in every dialect (see schema/dialects.json). */
export type RecordKind = "job" | "scheduled" | "retry" | "dead" | "activejob" | "process" | "process-info" | "work";
/** Every kind of record Sidekiq keeps in Redis that has a schema in `schema/`. */
export const RECORD_KINDS: readonly RecordKind[] = [
  "job",
  "scheduled",
  "retry",
  "dead",
  "activejob",
  "process",
  "process-info",
  "work",
];

/** A resolved dialect: the exact Sidekiq version written and its dialect. */
export interface WireProfile {
  /** The Sidekiq release whose writer this profile reproduces. */
  version: string;
  dialect: Dialect;
  // The fields below copy releaseRules(version) (release-rules.ts says when each changed).
  /** Unit of payload `created_at`, `enqueued_at`, `failed_at`, `retried_at`. */
  payloadTime: "seconds" | "millis";
  /** `Base64.encode64` (newline every 60 chars) before 7.2.1, strict from it. */
  backtraceBase64: "mime" | "strict";
  /** Work hash suffix: `:workers` up to 6.4.1, `:work` from 6.4.2. */
  workKey: "workers" | "work";
  /** Heartbeat period in seconds. */
  beatSeconds: number;
  /** The class string ActiveJob's Sidekiq adapter writes. */
  activeJobWrapper: string;
}

/** A Sidekiq version the bridge does not speak. */
export class UnsupportedVersionError extends Error {
  override name = "UnsupportedVersionError";
}

/** The exact wire profile of a Sidekiq release (6.0 and later). */
export function profileForVersion(version: string): WireProfile {
  const m = /^(\d+)\.\d+/.exec(version);
  const major = m ? Number(m[1]) : NaN;
  if (!(major >= 6))
    throw new UnsupportedVersionError(`Sidekiq ${version} is older than 6.0, which sidekiq-bridge does not speak`);
  // Majors newer than 8 are read as 8 until they are known to differ.
  const dialect: Dialect = major >= 8 ? 8 : (major as Dialect);
  const rules = releaseRules(version);
  return {
    version,
    dialect,
    payloadTime: rules.payload.time,
    backtraceBase64: rules.payload.backtraceBase64,
    workKey: rules.launcher.workKey,
    beatSeconds: rules.launcher.beatSeconds,
    activeJobWrapper: rules.activeJob.wrapperClass,
  };
}

/** The release each bare dialect stands for: the one our interop matrix runs. */
export const DIALECT_VERSION: Record<Dialect, string> = { 6: "6.4.1", 7: "7.3.2", 8: "8.1.7" };

/** A dialect (6, 7, 8), an exact Sidekiq version ("7.3.2"), or a profile. */
export type DialectLike = Dialect | string | WireProfile;

export function profileFor(d: DialectLike): WireProfile {
  if (typeof d === "object") return d;
  if (typeof d === "number") {
    if (!DIALECTS.includes(d)) throw new UnsupportedVersionError(`unknown dialect ${String(d)}: use 6, 7 or 8`);
    return profileForVersion(DIALECT_VERSION[d]);
  }
  if (/^\d+$/.test(d)) return profileFor(Number(d) as Dialect);
  return profileForVersion(d);
}
