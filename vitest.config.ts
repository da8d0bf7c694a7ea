import { defineConfig } from "vitest/config";
import { resultsFile } from "./harness/results.js";
import { LongFilesFirst } from "./interop-tests/support/sequencer.js";

// The Valkey/Node 24 and Docker passes repeat the interop project, each block
// on one of its Sidekiq releases (releasesForPass in interop-tests/support/harness.ts);
// these files
// are left to the first pass, where their subject is: long soaks and checks
// that depend on neither the server, the Node version nor where Ruby runs
// (fault injection on Redis, a 3-minute two-poller soak, the cron parser
// against fugit, the packed tarball, the unique-jobs scenario matrix and its
// kill -9 orphans). This keeps the whole of npm test within CI's time.
const REPEAT_PASS_EXCLUDES = [
  // sidekiq-throttled's mixed Ruby/Node timing checks: their Lua and keys are the same on
  // every server, and run side by side in the two repeat passes they slowed both past their waits.
  "interop-tests/throttled.test.ts",
  // sidekiq-scheduler's schedule types against the gem, about 3 minutes a pass.
  "interop-tests/scheduler.test.ts",
  "interop-tests/chaos.test.ts",
  "interop-tests/cron-poller.test.ts",
  "interop-tests/cron-parser.test.ts",
  "interop-tests/scheduler-soak.test.ts",
  "interop-tests/package-consumers.test.ts",
  "interop-tests/unique-jobs.test.ts",
  "interop-tests/unique-jobs-orphans.test.ts",
  "interop-tests/throttled-lost-slots.test.ts",
  // Chromium comparing live counters with Ruby's: run once, in the first pass
  // (web-command and web-mixed-fleet still run the dashboard on every pass).
  "interop-tests/web-dashboard.test.ts",
  // kill -9 of the CLI mid bulk action (about 20 CLI processes a release), the
  // contract's Ruby call semantics, the pollers killed between claim and push,
  // and the differential fuzz slice: their subject is not the server, Node or
  // where Ruby runs.
  "interop-tests/bulk-actions-kill.test.ts",
  "interop-tests/contract.test.ts",
  "interop-tests/contract-stubs.test.ts",
  "interop-tests/cron-claim-recovery.test.ts",
  "interop-tests/scheduler-claim-recovery.test.ts",
  "interop-tests/fuzz-slice.test.ts",
  // The Rails app's side of mail and jobs about records (two Rails boots and a worker each);
  // rails-to-node.test.ts stays in every pass: its time zones go through each Node's ICU.
  "interop-tests/rails-activejob.test.ts",
  "interop-tests/rails-mailer.test.ts",
  // The release sweep's subject is the release (ten of them, three from Debian):
  // the first pass runs it, on the local backend (the Docker images carry Debian's releases only).
  "interop-tests/release-sweep.test.ts",
];
// The Docker pass changes where Ruby runs, so it also leaves out the files
// that run no Ruby (they start their own local Redis: in this pass they would
// repeat the first pass exactly), and those whose subject is the Node worker
// while Ruby only enqueues or reads the API through evals, which the files
// left in this pass check in Docker; and the 200,000-entry migration round
// trips. The Valkey/Node 24 pass runs them all.
const DOCKER_PASS_EXCLUDES = [
  "interop-tests/migration.test.ts",
  // No Ruby.
  "interop-tests/bad-input.test.ts",
  "interop-tests/cron-bad-input.test.ts",
  "interop-tests/scheduler-bad-input.test.ts",
  "interop-tests/scheduler-claims.test.ts",
  "interop-tests/server-connections.test.ts",
  // Its own server with ACL users on 127.0.0.1, which Ruby in a container does not reach.
  "interop-tests/acl-user.test.ts",
  "interop-tests/server-stop-without-redis.test.ts",
  // The Node worker's fetch batches and its --processes supervisor.
  "interop-tests/server-fetch-batch.test.ts",
  "interop-tests/swarm.test.ts",
];
// Every push in this project's tests is validated against schema/ (the
// client's default is off; the forked test workers inherit this).
process.env.SIDEKIQ_BRIDGE_VALIDATE ??= "1";

const pass = process.env.SIDEKIQ_BRIDGE_PASS;
const exclude =
  pass === "docker"
    ? [...REPEAT_PASS_EXCLUDES, ...DOCKER_PASS_EXCLUDES]
    : pass === "repeat"
      ? REPEAT_PASS_EXCLUDES
      : [];

export default defineConfig({
  test: {
    // Ruby processes and Redis share 2 cores. The first pass runs alone and
    // leaves a third of them idle with 3 files at once (most tests wait on
    // pollers and heartbeats), so it runs 4; the two repeat passes run side
    // by side, 3 each.
    maxWorkers: pass ? 3 : 4,
    // Known long files start first, also in a fresh clone with no timings.
    sequence: { sequencer: LongFilesFirst },
    // Each pass of npm test reports to its own file; .ci/summary.mjs adds them up.
    reporters: ["verbose", ["json", { outputFile: resultsFile() }]],
    projects: [
      { test: { name: "unit", include: ["test/**/*.test.ts"] } },
      {
        test: {
          name: "interop",
          include: ["interop-tests/**/*.test.ts"],
          exclude,
          // Builds the real-Sidekiq matrix and a Redis once per run.
          globalSetup: ["interop-tests/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
