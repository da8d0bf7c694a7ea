// Which of npm test's passes run which interop files, and why: the one place
// a file is left out of a pass. Every interop file not named here runs in all
// three. The first pass runs everything on every release; the Valkey/Node 24
// pass ("repeat") and the Docker pass repeat the interop project, each
// `describeEachSidekiq` block on one of its releases (releasesForPass in
// support/harness.ts). The Bun and Deno passes run the unit project and only
// RUNTIME_PASS_FILES. test/package/passes.test.ts checks every file exists.
//
// Which server each pass runs on (SIDEKIQ_BRIDGE_SERVER, harness/servers.ts):
// every server Debian ships is covered once, no pass added for it.
// - first: bookworm's Redis 7.0, the oldest server the bridge supports, under
//   every file and every release;
// - repeat (Node 24): forky's Valkey 9.1, the newest Valkey beside the newest
//   Node, with the migrations, ACL users and --processes that exercise the server;
// - docker: Redis 8.0, Debian forky's redis-server in its container (what new
//   managed instances run), Ruby in containers talking to it;
// - bun: trixie's Valkey 8.1 (the runtime is its subject; a local server, so
//   it runs where Docker does not);
// - deno: forky's Redis 8.0, locally (the runtime is its subject; the Docker
//   pass has that server in its container).
//
// PASS_SERVERS says it for the scripts that start the passes, REPEAT_SLOTS
// which of them run side by side.

/** A pass of npm test: the first, the Valkey/Node 24 repeat, the Docker repeat, the Bun and Deno runtime passes. */
export type PassName = "first" | "repeat" | "docker" | "bun" | "deno";

/** The SIDEKIQ_BRIDGE_SERVER of each local pass (the Docker pass's server is its compose service). */
export const PASS_SERVERS = { first: "redis", repeat: "valkey9", bun: "valkey", deno: "redis8" } as const;

/**
 * The passes after the first, as scripts/test-repeat-passes.ts runs them:
 * the slots side by side, each slot's passes one after the other. Three at
 * once is what 2 cores carry (a pass mostly waits on Ruby, Redis and timers);
 * the runtime passes, a few minutes each, share a slot and end well before
 * the two long ones.
 */
export const REPEAT_SLOTS: readonly (readonly Exclude<PassName, "first">[])[] = [
  ["repeat"],
  ["docker"],
  ["bun", "deno"],
];

/**
 * The interop files of the Bun and Deno passes: the Node side under test (the
 * vitest workers, the CLI and worker processes they spawn) runs on that
 * runtime, against Ruby. The client, the worker, retries, the heartbeat as
 * Ruby's API and Web UI see it, the CLI and --processes, the dashboard. The
 * rest's subject is the wire and Ruby, which the runtime does not change.
 */
export const RUNTIME_PASS_FILES: readonly string[] = [
  "interop-tests/client.test.ts",
  "interop-tests/server.test.ts",
  "interop-tests/server-retry.test.ts",
  "interop-tests/server-heartbeat.test.ts",
  "interop-tests/server-webui.test.ts",
  "interop-tests/cli.test.ts",
  "interop-tests/swarm.test.ts",
  "interop-tests/web-command.test.ts",
];

/** The pass named by SIDEKIQ_BRIDGE_PASS (unset: the first). */
export function passNamed(pass: string | undefined): PassName {
  if (pass === undefined || pass === "") return "first";
  if (pass === "repeat" || pass === "docker" || pass === "bun" || pass === "deno") return pass;
  throw new Error(`SIDEKIQ_BRIDGE_PASS must be repeat, docker, bun or deno, not "${pass}"`);
}

/** The interop files a pass runs, as vitest include patterns. */
export function interopIncluded(pass: string | undefined): string[] {
  const name = passNamed(pass);
  return name === "bun" || name === "deno" ? [...RUNTIME_PASS_FILES] : ["interop-tests/**/*.test.ts"];
}

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
  const name = passNamed(pass);
  if (name === "bun" || name === "deno") return [];
  return PASS_RULES.filter((r) => !r.passes.includes(name)).flatMap((r) => [...r.files]);
}
