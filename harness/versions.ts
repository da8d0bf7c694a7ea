// The real-Sidekiq matrix: which Debian suite carries which Sidekiq release.
import type { Dialect } from "../src/wire/dialect.js";

export type Suite = "bookworm" | "trixie" | "forky";

export interface SidekiqTarget {
  /** The Sidekiq release Debian ships in `suite`. */
  version: string;
  suite: Suite;
  dialect: Dialect;
  ruby: string;
  /** Rails' ActiveJob is installed beside Sidekiq. */
  activejob: boolean;
  /** The docker-compose.yml service running this release. */
  service: string;
}

export const MATRIX: readonly SidekiqTarget[] = [
  { version: "6.4.1", suite: "bookworm", dialect: 6, ruby: "3.1", activejob: true, service: "sidekiq-6" },
  { version: "7.3.2", suite: "trixie", dialect: 7, ruby: "3.3", activejob: true, service: "sidekiq-7" },
  { version: "8.1.7", suite: "forky", dialect: 8, ruby: "3.3", activejob: true, service: "sidekiq-8" },
];

/**
 * The targets named by SIDEKIQ_VERSIONS: "all" (the default), or a comma list
 * of releases ("6.4.1,8.1.7") or majors ("6,8"). An unknown name is an error,
 * never a silent skip.
 */
export function selectedTargets(spec: string | undefined = process.env.SIDEKIQ_VERSIONS): SidekiqTarget[] {
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
