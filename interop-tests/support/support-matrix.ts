// What docs/SUPPORT.md says, in one place: each check of the release sweeps
// (its test title and the table's columns it stands for), the add-on gems
// with the Sidekiq range of their gemspecs, the interop files that cover a
// column on Debian's releases, and the rules of src/core/wire/release-rules.ts a
// column reads from source where nothing runs. The sweeps name their tests
// from here; scripts/support-table.ts renders the table from here, and
// test/docs/support-table.test.ts fails when the two disagree.
import type { ServerKind } from "../../harness/servers.js";
import { requirementAllows } from "../../harness/versions.js";
import { versionAtLeast } from "../../src/core/wire/release-rules.js";

export const CORE_COLUMNS = {
  client: "Client (Node pushes, Ruby runs)",
  worker: "Worker (Ruby pushes, Node runs)",
  webui: "Ruby Web UI renders Node's data",
  api: "API (Ruby's reads Node's; Node's reads Ruby's)",
  dashboard: "Node dashboard",
  migration: "Migration",
} as const;
export type CoreColumn = keyof typeof CORE_COLUMNS;
export type AddonGem = "sidekiq-cron" | "sidekiq-unique-jobs" | "sidekiq-throttled" | "sidekiq-scheduler";
export type Column = CoreColumn | AddonGem;

export interface SweepCheck {
  /** The test's title in interop-tests/release-sweep.test.ts. */
  title: string;
  columns: readonly CoreColumn[];
  /** Declared only on releases from this one (the behaviour is absent before). */
  since?: string;
}

/** The checks of interop-tests/release-sweep.test.ts, declared there with `sweepIt(id, ...)`. */
export const SWEEP_CHECKS = {
  loads: {
    title: "loads this release from its own sources, and its bin/sidekiq serves",
    columns: ["worker"],
  },
  nodeToRuby: {
    title: "Node's perform_async, perform_in, bulk and ActiveJob run in this release's worker with equal arguments",
    columns: ["client"],
  },
  rubyToNode: {
    title: "this release's perform_async, perform_in, push_bulk and ActiveJob run in a Node worker",
    columns: ["worker"],
  },
  failureRead: {
    title: "a Node failure is read by this release's RetrySet and Web UI: fields, time unit, the backtrace it decodes",
    columns: ["worker", "api", "webui"],
  },
  failureRoutes: {
    title: "each failure goes where this release's JobRetry sends it, with its delay and death handlers",
    columns: ["worker"],
  },
  stats: {
    title: "Stats, History, the metrics query and queue latency read Node's work and pushes",
    columns: ["api"],
  },
  deadSetKill: {
    title: "DeadSet#kill trims as this release's does, by the limits it reads (dead_max_jobs 3 configured)",
    columns: ["api"],
  },
  rules: {
    title: "client, API and poller rules: the same answers from Node as from this release's own code",
    columns: ["client", "api"],
  },
  iterable: {
    title: "IterableJob: this release's resume reads the cursor Node saved; its cancel! (7.3.3+) stops Node",
    columns: ["worker"],
    since: "7.3.0",
  },
  heartbeat: {
    title:
      "heartbeat: this release's ProcessSet, WorkSet, /busy and bin/sidekiqmon show the Node process; its quiet! and stop! reach Node",
    columns: ["worker", "api", "webui"],
  },
} as const satisfies Record<string, SweepCheck>;
export type SweepCheckId = keyof typeof SWEEP_CHECKS;

/** The sweep checks declared on `version`. */
export function sweepChecksFor(version: string): SweepCheckId[] {
  return (Object.keys(SWEEP_CHECKS) as SweepCheckId[]).filter((id) => {
    const since = (SWEEP_CHECKS[id] as SweepCheck).since;
    return since === undefined || versionAtLeast(version, since);
  });
}

export interface AddonRelease {
  gem: AddonGem;
  /** Its folder of ../shared/peers/ruby. */
  folder: string;
  version: string;
  /** The gemspec's `add_dependency "sidekiq"` requirements (checked against the gemspec by the add-on sweep). */
  sidekiq: readonly string[];
}

/** The add-on gem releases in ../shared/peers/ruby, newest first within a gem. */
export const ADDON_RELEASES: readonly AddonRelease[] = [
  { gem: "sidekiq-cron", folder: "sidekiq-cron-2.3.1", version: "2.3.1", sidekiq: [">= 6.5.0"] },
  {
    gem: "sidekiq-unique-jobs",
    folder: "sidekiq-unique-jobs-9.0.0.alpha2",
    version: "9.0.0.alpha2",
    sidekiq: [">= 8.0.0", "< 10.0.0"],
  },
  {
    gem: "sidekiq-unique-jobs",
    folder: "sidekiq-unique-jobs-8.1.0",
    version: "8.1.0",
    sidekiq: [">= 7.0.0", "< 9.0.0"],
  },
  { gem: "sidekiq-throttled", folder: "sidekiq-throttled-2.1.0", version: "2.1.0", sidekiq: [">= 8.0"] },
  { gem: "sidekiq-throttled", folder: "sidekiq-throttled-1.5.2", version: "1.5.2", sidekiq: [">= 6.5"] },
  { gem: "sidekiq-scheduler", folder: "sidekiq-scheduler-6.0.2", version: "6.0.2", sidekiq: [">= 7.3", "< 9"] },
  { gem: "sidekiq-scheduler", folder: "sidekiq-scheduler-5.0.6", version: "5.0.6", sidekiq: [">= 6", "< 8"] },
];

/** The add-on sweep's check of each gem (its test title ends with the gem release). */
export const ADDON_CHECKS: Record<AddonGem, string> = {
  "sidekiq-cron":
    "sidekiq-cron: this release's Sidekiq::Cron::Job lists and enqueues Node's cron job; Node reads and enqueues Ruby's",
  "sidekiq-unique-jobs":
    "sidekiq-unique-jobs: a lock Node's push takes refuses this release's push of the same job, and Ruby's lock refuses Node's",
  "sidekiq-throttled":
    "sidekiq-throttled: the concurrency slots Node holds throttle this release's job; a slot Ruby gives back lets Node's run",
  "sidekiq-scheduler":
    "sidekiq-scheduler: this release's Sidekiq.get_schedule reads Node's dynamic schedule; Node reads Ruby's set_schedule",
};

/** The title of the add-on sweep's test of one gem release. */
export function addonTitle(a: AddonRelease): string {
  return `${ADDON_CHECKS[a.gem]} (${a.gem} ${a.version})`;
}

/** The add-on gem releases whose gemspec allows Sidekiq `version`. */
export function addonsFor(version: string): AddonRelease[] {
  return ADDON_RELEASES.filter((a) => requirementAllows(a.sidekiq, version));
}

/**
 * The add-on releases a sweep release loads, one Ruby process per group: a
 * process loads at most one release of each gem (two releases of one gem
 * define the same constants), the newest first.
 */
export function addonGroups(version: string): AddonRelease[][] {
  const groups: AddonRelease[][] = [];
  for (const a of addonsFor(version)) {
    const g = groups.find((x) => !x.some((y) => y.gem === a.gem));
    if (g) g.push(a);
    else groups.push([a]);
  }
  return groups;
}

/** A describe block of another interop file that covers a column on some of Debian's releases. */
export interface InteropCheck {
  file: string;
  /** The describe title (describeEachSidekiq's), as in the file. */
  describe: string;
  releases: readonly string[];
  columns: readonly CoreColumn[];
}

export const INTEROP_CHECKS: readonly InteropCheck[] = [
  {
    file: "interop-tests/web-dashboard.test.ts",
    describe: "web dashboard in Chromium",
    releases: ["6.4.1", "7.3.2", "8.1.7"],
    columns: ["dashboard"],
  },
  {
    file: "interop-tests/web-order.test.ts",
    describe: "web dashboard lists pages in the order of Ruby's Web UI",
    releases: ["6.4.1", "7.3.2", "8.1.7"],
    columns: ["dashboard"],
  },
  {
    file: "interop-tests/migration.test.ts",
    describe: "migration: timestamps 8 -> 7 -> 8 under live pushes",
    releases: ["7.3.2"],
    columns: ["migration"],
  },
  {
    file: "interop-tests/migration.test.ts",
    describe: "migration: hand b over from Ruby to Node and back, under traffic",
    releases: ["8.1.7"],
    columns: ["migration"],
  },
];

/** What a column depends on in src/core/wire/release-rules.ts (rule groups or single rules), where nothing runs it. */
export const SOURCE_RULES: Record<CoreColumn, readonly string[]> = {
  client: ["payload", "client", "activeJob"],
  worker: ["retry", "launcher", "scheduled", "iteration"],
  webui: ["payload", "api.busyByHostname"],
  api: ["api", "metrics"],
  dashboard: ["api", "launcher", "metrics", "payload.time"],
  migration: ["payload.time"],
};

/**
 * npm test's passes: the JavaScript runtime each runs sidekiq-bridge on, the
 * server it runs against and where Ruby runs (interop-tests/passes.ts says
 * why each server is where it is; CI's summary names the exact releases).
 */
export const PASSES_RUN = [
  {
    runtime: "Node 20",
    server: "Redis 7.0 (Debian bookworm)",
    ruby: "Debian root filesystems",
    runs: "unit + every interop file, every release",
  },
  {
    runtime: "Node 24 (Debian forky)",
    server: "Valkey 9.1 (Debian forky)",
    ruby: "Debian root filesystems",
    runs: "unit + interop, one release per block",
  },
  {
    runtime: "Node 20",
    server: "Redis 8.0 (Debian forky)",
    ruby: "Docker containers",
    runs: "interop, one release per block",
  },
  {
    runtime: "Bun 1.4",
    server: "Valkey 8.1 (Debian trixie)",
    ruby: "Debian root filesystems",
    runs: "unit + client, worker, retries, heartbeat, Web UI, CLI, --processes, dashboard",
  },
  {
    runtime: "Deno 2.9",
    server: "Redis 8.0 (Debian forky)",
    ruby: "Debian root filesystems",
    runs: "unit + client, worker, retries, heartbeat, Web UI, CLI, --processes, dashboard",
  },
] as const;

/**
 * What sidekiq-bridge supports, each line run in CI: the JavaScript runtimes
 * (package.json's `engines` is their ranges, test/docs/support-table.test.ts
 * holds the two together) and the servers. interop-tests/package-consumers.test.ts
 * runs README's first job from the packed tarball on every runtime here, and
 * checks the release each run reports is of the line named.
 */
export const RUNTIMES = [
  { id: "node20", runtime: "Node 20", engine: "node", range: "^20.19.0", line: "20.", from: "the machine's `node`" },
  {
    id: "node24",
    runtime: "Node 24",
    engine: "node",
    range: "^24.0.0",
    line: "24.",
    from: "Debian forky's `nodejs` (`scripts/node24`)",
  },
  { id: "bun", runtime: "Bun 1.4", engine: "bun", range: "~1.4.4", line: "1.4.", from: "the `bun` devDependency" },
  { id: "deno", runtime: "Deno 2.9", engine: "deno", range: "~2.9.6", line: "2.9.", from: "the `deno` devDependency" },
] as const;
export type RuntimeId = (typeof RUNTIMES)[number]["id"];

/** package.json's `engines`: each engine's ranges, joined as npm reads alternatives. */
export function enginesOf(runtimes: readonly { engine: string; range: string }[]): Record<string, string> {
  const engines: Record<string, string> = {};
  for (const r of runtimes) engines[r.engine] = engines[r.engine] ? `${engines[r.engine]} || ${r.range}` : r.range;
  return engines;
}

/** The servers, each Debian's and each one pass's of PASSES_RUN; `kind` starts it in tests (SIDEKIQ_BRIDGE_SERVER). */
export const SERVERS = [
  { server: "Redis 7.0", kind: "redis", from: "Debian bookworm" },
  { server: "Redis 8.0", kind: "redis8", from: "Debian forky" },
  { server: "Valkey 8.1", kind: "valkey", from: "Debian trixie" },
  { server: "Valkey 9.1", kind: "valkey9", from: "Debian forky" },
] as const satisfies readonly { server: string; kind: ServerKind; from: string }[];
