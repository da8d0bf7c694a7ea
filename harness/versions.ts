// The real-Sidekiq matrix: which Debian suite carries which Sidekiq release.
import type { Dialect } from "../src/core/wire/dialect.js";
import { versionAtLeast } from "../src/core/wire/release-rules.js";

export type Suite = "bookworm" | "trixie" | "forky";

export interface SidekiqTarget {
  /** The Sidekiq release Debian ships in `suite`. */
  version: string;
  suite: Suite;
  dialect: Dialect;
  ruby: string;
  /** Rails' ActiveJob is installed beside Sidekiq. */
  activejob: boolean;
  /** The docker-compose.yml service running this release (the Debian release of its suite for a sweep release). */
  service: string;
  /**
   * An upstream release run from its own sources (a folder of
   * shared/peers/sidekiq, e.g. "sidekiq-7.2.4") on RUBYLIB with its own
   * bin/sidekiq, in `suite`'s root filesystem; absent: Debian's release of the suite.
   */
  release?: string;
  /** Folders of shared/peers/ruby put before the release on RUBYLIB: gems of the suite too new for it. */
  preload?: readonly string[];
}

export const MATRIX: readonly SidekiqTarget[] = [
  { version: "6.4.1", suite: "bookworm", dialect: 6, ruby: "3.1", activejob: true, service: "sidekiq-6" },
  { version: "7.3.2", suite: "trixie", dialect: 7, ruby: "3.3", activejob: true, service: "sidekiq-7" },
  { version: "8.1.7", suite: "forky", dialect: 8, ruby: "3.3", activejob: true, service: "sidekiq-8" },
];

function upstream(version: string, suite: Suite, preload?: readonly string[]): SidekiqTarget {
  const debian = MATRIX.find((m) => m.suite === suite)!;
  return { ...debian, version, release: `sidekiq-${version}`, ...(preload ? { preload } : {}) };
}

/**
 * The release sweep: Debian's three and the last patch of every minor line
 * fleets pin (plus 8.0.8, the last 8.0 before `capsules`), oldest first. Kept
 * out of MATRIX so that every interop file does not run ten times; the sweep
 * file (interop-tests/release-sweep.test.ts) runs all of them, and
 * SIDEKIQ_RELEASE runs any interop file on one. Each runs in the suite whose
 * Ruby and gems satisfy its gemspec.
 */
export const SWEEP: readonly SidekiqTarget[] = [
  MATRIX[0]!,
  upstream("6.5.12", "bookworm"),
  upstream("7.0.9", "trixie"),
  upstream("7.1.6", "trixie"),
  upstream("7.2.4", "trixie"),
  MATRIX[1]!,
  upstream("7.3.10", "trixie"),
  // forky's connection_pool 3 kills 8.0.8's scheduler thread (TimedStack#pop arity); 8.0.10 fixed it.
  upstream("8.0.8", "forky", ["connection_pool-2.5.5"]),
  upstream("8.0.10", "forky"),
  MATRIX[2]!,
];

/** A target of the matrix or the sweep, by its release ("7.2.4"); throws for any other name. */
export function targetForVersion(version: string): SidekiqTarget {
  const t = SWEEP.find((m) => m.version === version);
  if (!t)
    throw new Error(
      `Sidekiq ${version} is in neither the matrix nor the sweep (${SWEEP.map((m) => m.version).join(", ")})`,
    );
  return t;
}

/**
 * The targets named by SIDEKIQ_RELEASE: a comma list of sweep releases
 * ("7.2.4,8.0.8"), which replaces SIDEKIQ_VERSIONS' selection; none when unset.
 */
export function selectedReleases(spec: string | undefined = process.env.SIDEKIQ_RELEASE): SidekiqTarget[] {
  const names = (spec ?? "").split(/[\s,]+/).filter(Boolean);
  return [...new Set(names.map((n) => targetForVersion(n)))];
}

/**
 * The targets named by SIDEKIQ_VERSIONS: "all" (the default), or a comma list
 * of releases ("6.4.1,8.1.7") or majors ("6,8"); or SIDEKIQ_RELEASE's sweep
 * releases. An unknown name is an error, never a silent skip.
 */
export function selectedTargets(
  spec: string | undefined = process.env.SIDEKIQ_VERSIONS,
  release: string | undefined = process.env.SIDEKIQ_RELEASE,
): SidekiqTarget[] {
  const releases = selectedReleases(release);
  if (releases.length > 0) {
    if ((spec ?? "").trim() !== "") throw new Error("set SIDEKIQ_RELEASE or SIDEKIQ_VERSIONS, not both");
    return releases;
  }
  const text = (spec ?? "").trim();
  if (text === "" || text === "all") return [...MATRIX];
  const out: SidekiqTarget[] = [];
  for (const name of text.split(/[\s,]+/).filter(Boolean)) {
    const t = MATRIX.find((m) => m.version === name || String(m.dialect) === name || m.suite === name);
    if (!t) {
      throw new Error(
        `SIDEKIQ_VERSIONS names "${name}", which is not in the matrix (${MATRIX.map((m) => m.version).join(", ")})`,
      );
    }
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/**
 * The sweep releases a run covers: SIDEKIQ_RELEASE's when set, otherwise
 * every sweep release of the majors selected (all ten by default).
 */
export function sweepTargets(
  selected: readonly SidekiqTarget[],
  release: string | undefined = process.env.SIDEKIQ_RELEASE,
): SidekiqTarget[] {
  const named = selectedReleases(release);
  if (named.length > 0) return named;
  return SWEEP.filter((t) => selected.some((s) => s.dialect === t.dialect));
}

/**
 * Whether a gemspec's requirements on sidekiq (">= 6.5", "< 9") allow
 * `version`; throws on one it cannot read (`~>` included).
 */
export function requirementAllows(requirements: readonly string[], version: string): boolean {
  return requirements.every((r) => {
    const [, op, min] = /^\s*([<>=!~]+)\s*([\d.]+)\s*$/.exec(r) ?? [];
    const c = min === undefined ? 0 : versionAtLeast(version, min) ? (versionAtLeast(min, version) ? 0 : 1) : -1;
    const ok: Record<string, boolean> = { ">=": c >= 0, ">": c > 0, "<": c < 0, "<=": c <= 0, "=": c === 0 };
    if (op === undefined || !(op in ok)) throw new Error(`cannot read the requirement "${r}"`);
    return ok[op]!;
  });
}
