// Wire dialects: the generations of Sidekiq whose Redis formats differ.
// A dialect names the major version; a profile pins the exact release,
// because a few details moved inside a major (work key in 6.5, strict base64 in 7.2.1).

export type Dialect = 6 | 7 | 8;
export const DIALECTS: readonly Dialect[] = [6, 7, 8];

/** Record kinds that have a schema in every dialect (see schema/dialects.json). */
export type RecordKind = "job" | "scheduled" | "retry" | "dead" | "activejob" | "process" | "process-info" | "work";
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

export interface WireProfile {
  /** The Sidekiq release whose writer this profile reproduces. */
  version: string;
  dialect: Dialect;
  /** Unit of payload `created_at`, `enqueued_at`, `failed_at`, `retried_at`. */
  payloadTime: "seconds" | "millis";
  /** `Base64.encode64` (newline every 60 chars) before 7.2.1, strict after. */
  backtraceBase64: "mime" | "strict";
  /** Work hash suffix: `:workers` up to 6.4.1, `:work` from 6.4.2. */
  workKey: "workers" | "work";
  /** Heartbeat period in seconds. */
  beatSeconds: number;
  /** The class string ActiveJob's Sidekiq adapter writes. */
  activeJobWrapper: string;
}

function cmp(a: string, b: string): number {
  const pa = a.split(".").map((x) => parseInt(x, 10) || 0);
  const pb = b.split(".").map((x) => parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** True when `version` >= `min` (numeric comparison of dotted parts). */
export function versionAtLeast(version: string, min: string): boolean {
  return cmp(version, min) >= 0;
}

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
  return {
    version,
    dialect,
    payloadTime: dialect === 8 ? "millis" : "seconds",
    backtraceBase64: versionAtLeast(version, "7.2.1") ? "strict" : "mime",
    workKey: versionAtLeast(version, "6.4.2") ? "work" : "workers",
    beatSeconds: dialect === 6 ? 5 : 10,
    activeJobWrapper:
      dialect === 8 ? "Sidekiq::ActiveJob::Wrapper" : "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
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
