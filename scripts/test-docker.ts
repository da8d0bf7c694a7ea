// npm run test:docker: the interop tests once more, with Ruby and Redis in real
// containers (the docker backend, docker-compose.yml). When no Docker engine
// can be had, it says why and the pass reports every test as skipped, so the
// summary shows it: never a silent pass. A dockerd started here is stopped here.
import { spawnSync } from "node:child_process";
import { aptOptionsForBuilds, type DockerEngine, ensureDockerEngine } from "../harness/docker-engine.js";

const REPORT = ".vitest-results-docker.json";
// Files whose subject is not where Ruby runs stay in the local pass
// (vitest.config.ts, SIDEKIQ_BRIDGE_PASS=docker).
// Extra arguments (file filters, -t) go to vitest.
const args = ["vitest", "run", "--project", "interop", ...process.argv.slice(2)];
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SIDEKIQ_BRIDGE_BACKEND: "docker",
  SIDEKIQ_BRIDGE_RESULTS: REPORT,
  SIDEKIQ_BRIDGE_PASS: "docker",
};

let engine: DockerEngine | undefined;
try {
  engine = await ensureDockerEngine();
  env.SIDEKIQ_BRIDGE_APT_OPTIONS ??= await aptOptionsForBuilds();
} catch (e) {
  const why = String((e as Error).message ?? e).split("\n")[0]!;
  console.error(`[sidekiq-bridge] docker pass: no Docker engine (${why}); its tests are reported as skipped`);
  env.SIDEKIQ_BRIDGE_DOCKER_UNAVAILABLE = why;
  // A name filter nothing matches: every test is collected and reported as skipped.
  args.push("--testNamePattern", "^(?!)");
}
const r = spawnSync("npx", args, { stdio: "inherit", env });
await engine?.release();
process.exit(r.status ?? 1);
