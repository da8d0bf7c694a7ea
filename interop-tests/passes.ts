// Which of npm test's passes run which interop files, and why: the one place
// a file is left out of a pass. Every interop file not named here runs in all
// three. The first pass runs everything on every release; the Valkey/Node 24
// pass ("repeat") and the Docker pass repeat the interop project, each
// `describeEachSidekiq` block on one of its releases (releasesForPass in
// support/harness.ts). test/package/passes.test.ts checks every file exists.

/** A pass of npm test: the first, the Valkey/Node 24 repeat, the Docker repeat. */
export type PassName = "first" | "repeat" | "docker";

export interface PassRule {
  /** The passes these files run in (the others leave them out). */
  passes: readonly PassName[];
  /** Why, in a line: what the files' subject is, and why the other passes would not add to it. */
  reason: string;
  files: readonly string[];
}

export const PASS_RULES: readonly PassRule[] = [
  {
    passes: ["first"],
    reason:
      "long soaks and checks whose subject is neither the server, the Node version nor where Ruby runs: a 3-minute two-poller soak, the cron parser against fugit, the packed tarball, the unique-jobs scenario matrix and its kill -9 orphans, the gems' schedule types, fault injection",
    files: [
      "interop-tests/scheduler.test.ts",
      "interop-tests/chaos.test.ts",
      "interop-tests/cron-poller.test.ts",
      "interop-tests/cron-parser.test.ts",
      "interop-tests/scheduler-soak.test.ts",
      "interop-tests/package-consumers.test.ts",
      "interop-tests/unique-jobs.test.ts",
      "interop-tests/unique-jobs-orphans.test.ts",
      "interop-tests/throttled-lost-slots.test.ts",
    ],
  },
  {
    passes: ["first"],
    reason:
      "sidekiq-throttled's mixed Ruby/Node timing checks: their Lua and keys are the same on every server, and side by side in the two repeat passes they slowed both past their waits",
    files: ["interop-tests/throttled.test.ts"],
  },
  {
    passes: ["first"],
    reason:
      "Chromium comparing live counters with Ruby's (web-command and web-mixed-fleet run the dashboard in every pass)",
    files: ["interop-tests/web-dashboard.test.ts"],
  },
  {
    passes: ["first"],
    reason:
      "the CLI killed mid bulk action (about 20 CLI processes a release), the contract's Ruby call semantics, the pollers killed between claim and push, the differential fuzz slice: not about the server, Node or where Ruby runs",
    files: [
      "interop-tests/bulk-actions-kill.test.ts",
      "interop-tests/contract.test.ts",
      "interop-tests/contract-stubs.test.ts",
      "interop-tests/cron-claim-recovery.test.ts",
      "interop-tests/scheduler-claim-recovery.test.ts",
      "interop-tests/fuzz-slice.test.ts",
    ],
  },
  {
    passes: ["first"],
    reason:
      "the Rails app's side of mail and jobs about records (Rails boots and a worker each); rails-to-node stays in every pass, its time zones going through each Node's ICU",
    files: ["interop-tests/rails-activejob.test.ts", "interop-tests/rails-mailer.test.ts"],
  },
  {
    passes: ["first"],
    reason:
      "the release sweep's subject is the release (ten of them) and the add-on gems each allows; it runs on the local backend, the Docker images carrying Debian's releases only",
    files: ["interop-tests/release-sweep.test.ts", "interop-tests/release-sweep-addons.test.ts"],
  },
  {
    passes: ["first"],
    reason:
      "the rolling upgrades run upstream releases two at a time on the local backend; their subject is the releases and the fleet reader, not the server, Node or where Ruby runs",
    files: ["interop-tests/rolling-upgrade.test.ts"],
  },
  {
    passes: ["first", "repeat"],
    reason: "the 200,000-entry migration round trips: their subject is the server, not where Ruby runs",
    files: ["interop-tests/migration.test.ts"],
  },
  {
    passes: ["first", "repeat"],
    reason: "no Ruby: each starts its own local Redis, so in the Docker pass it would repeat the first pass exactly",
    files: [
      "interop-tests/bad-input.test.ts",
      "interop-tests/cron-bad-input.test.ts",
      "interop-tests/scheduler-bad-input.test.ts",
      "interop-tests/scheduler-claims.test.ts",
      "interop-tests/server-connections.test.ts",
      "interop-tests/server-stop-without-redis.test.ts",
    ],
  },
  {
    passes: ["first", "repeat"],
    reason: "its own server with ACL users on 127.0.0.1, which Ruby in a container does not reach",
    files: ["interop-tests/acl-user.test.ts"],
  },
  {
    passes: ["first", "repeat"],
    reason: "the Node worker's fetch batches and its --processes supervisor: Ruby only enqueues there",
    files: ["interop-tests/server-fetch-batch.test.ts", "interop-tests/swarm.test.ts"],
  },
];

/** The files a pass leaves out (SIDEKIQ_BRIDGE_PASS: undefined for the first, "repeat", "docker"). */
export function excludedFrom(pass: string | undefined): string[] {
  const name: PassName = pass === "docker" ? "docker" : pass === "repeat" ? "repeat" : "first";
  return PASS_RULES.filter((r) => !r.passes.includes(name)).flatMap((r) => [...r.files]);
}
