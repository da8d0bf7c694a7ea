// vitest globalSetup: one Redis and one prepared matrix per test run,
// handed to the test workers through `provide`; everything undone at the end.
import type { TestProject } from "vitest/node";
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessInfo } from "../../harness/backend.js";
import { composeDown, composeUp, DOCKER_FIXTURES } from "../../harness/docker-backend.js";
import { aptOptionsForBuilds, ensureDebianBaseImages, ensureDockerEngine } from "../../harness/docker-engine.js";
import { installFixtures, installReleases, removeFixtures, REPO_ROOT } from "../../harness/local-backend.js";
import { startServer } from "../../harness/servers.js";
import { spawnSync } from "node:child_process";
import { ensureDebianPackages, prepareRootfs } from "../../harness/prepare.js";
import { writePassInfo } from "../../harness/results.js";
import { selectedTargets, sweepTargets } from "../../harness/versions.js";
import { javascriptRuntime, javascriptRuntimeLabel } from "../../src/core/wire/bridge-label.js";

declare module "vitest" {
  export interface ProvidedContext {
    harness: HarnessInfo;
  }
}

/** "Redis 7.0.15" or "Valkey 8.1.1", from INFO server. */
async function serverVersion(url: string): Promise<string> {
  const r = new Redis(url);
  try {
    const info = await r.info("server");
    const valkey = /valkey_version:(\S+)/.exec(info)?.[1];
    return valkey ? `Valkey ${valkey}` : `Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? "?"}`;
  } finally {
    r.disconnect();
  }
}

/** The runtime for the pass's summary line when it is not Node (on Bun and Deno, process.version is an emulated Node's). */
function runtimeIfNotNode(): { runtime?: string } {
  return javascriptRuntime().name === "Node" ? {} : { runtime: javascriptRuntimeLabel() };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const targets = selectedTargets();
  const backend = (process.env.SIDEKIQ_BRIDGE_BACKEND ?? "local") as "local" | "docker";
  const runId = `run-${process.pid}-${randomBytes(3).toString("hex")}`;
  const logDir = join(tmpdir(), `sidekiq-bridge-${runId}`);
  mkdirSync(logDir, { recursive: true });
  const undo: Array<() => Promise<void> | void> = [];

  try {
    // The real binary (dist/assembly/main.js) is built once, before any suite spawns it
    // (scripts/test-repeat-passes.ts builds it once for two passes running together).
    if (process.env.SIDEKIQ_BRIDGE_DIST_BUILT !== "1") {
      const build = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, encoding: "utf8" });
      if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
    }
    let info: HarnessInfo;
    if (backend === "docker" && process.env.SIDEKIQ_BRIDGE_DOCKER_UNAVAILABLE) {
      // scripts/test-docker.ts found no engine: every test is skipped (it runs vitest with a
      // name filter nothing matches), and the summary says why.
      const why = process.env.SIDEKIQ_BRIDGE_DOCKER_UNAVAILABLE;
      console.log(`[sidekiq-bridge] docker backend unavailable (${why}): every interop test is skipped`);
      project.provide("harness", {
        backend,
        redisUrl: "redis://127.0.0.1:1",
        rubyRedisBase: "redis://127.0.0.1:1",
        versions: targets.map((t) => t.version),
        rootfs: {},
        fixturesDir: DOCKER_FIXTURES,
        logDir,
        unavailable: why,
      });
      writePassInfo({ backend, node: process.version, ...runtimeIfNotNode(), unavailable: why });
      return async () => {};
    }
    if (backend === "docker") {
      if (targets.some((t) => t.release))
        throw new Error(
          "SIDEKIQ_RELEASE runs on the local backend only: the Docker images carry Debian's releases (see harness/README.md)",
        );
      const engine = await ensureDockerEngine(logDir);
      undo.push(() => engine.release());
      ensureDebianBaseImages(["bookworm", ...targets.map((t) => t.suite)]);
      const run = await composeUp(
        targets.map((t) => t.service),
        process.env.SIDEKIQ_BRIDGE_APT_OPTIONS ?? (await aptOptionsForBuilds()),
      );
      undo.push(() => composeDown(run.project));
      info = {
        backend,
        redisUrl: run.redisUrl,
        rubyRedisBase: run.redisUrl,
        versions: targets.map((t) => t.version),
        rootfs: {},
        fixturesDir: DOCKER_FIXTURES,
        logDir,
        composeFile: "docker-compose.yml",
        containers: run.containers,
      };
    } else if (backend === "local") {
      ensureDebianPackages({ "redis-server": "redis-server" });
      const rootfs = await prepareRootfs(targets);
      const fixturesDir = `/opt/sidekiq-bridge/${runId}`;
      const releases = sweepTargets(targets);
      for (const [suite, root] of Object.entries(rootfs)) {
        installFixtures(root, runId);
        undo.push(() => removeFixtures(root, fixturesDir));
        // The upstream releases this run may name (the sweep's, SIDEKIQ_RELEASE's) in their suite.
        installReleases(
          root,
          fixturesDir,
          releases.filter((t) => t.suite === suite),
        );
      }
      // SIDEKIQ_BRIDGE_SERVER picks the server (harness/servers.ts; which pass runs which: interop-tests/passes.ts).
      const redis = await startServer();
      undo.push(() => redis.stop());
      info = {
        backend,
        redisUrl: redis.url,
        rubyRedisBase: redis.url,
        versions: targets.map((t) => t.version),
        rootfs,
        fixturesDir,
        logDir,
      };
    } else {
      throw new Error(`SIDEKIQ_BRIDGE_BACKEND must be "local" or "docker", not "${backend}"`);
    }
    const server = await serverVersion(info.redisUrl);
    writePassInfo({ backend, server, node: process.version, ...runtimeIfNotNode() });
    console.log(
      `[sidekiq-bridge] ${backend} backend, real Sidekiq ${info.versions.join(", ")}, ${server} at ${info.redisUrl}, ${javascriptRuntimeLabel()}, logs in ${logDir}`,
    );
    project.provide("harness", info);
  } catch (e) {
    for (const u of undo.reverse()) await u();
    throw e;
  }

  return async () => {
    for (const u of undo.reverse()) await u();
  };
}
