// vitest globalSetup: one Redis and one prepared matrix per test run,
// handed to the test workers through `provide`; everything undone at the end.
import type { TestProject } from "vitest/node";
import { Redis } from "ioredis";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessInfo } from "../../harness/backend.js";
import { composeDown, composeUp } from "../../harness/docker-backend.js";
import { installFixtures, removeFixtures, REPO_ROOT } from "../../harness/local-backend.js";
import { startServer } from "../../harness/servers.js";
import { spawnSync } from "node:child_process";
import { ensureDebianPackages, prepareRootfs } from "../../harness/prepare.js";
import { selectedTargets } from "../../harness/versions.js";

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

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const targets = selectedTargets();
  const backend = (process.env.SIDEKIQ_BRIDGE_BACKEND ?? "local") as "local" | "docker";
  const runId = `run-${process.pid}-${randomBytes(3).toString("hex")}`;
  const logDir = join(tmpdir(), `sidekiq-bridge-${runId}`);
  mkdirSync(logDir, { recursive: true });
  const undo: Array<() => Promise<void> | void> = [];

  try {
    // The real binary (dist/cli/main.js) is built once, before any suite spawns it.
    const build = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, encoding: "utf8" });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}${build.stderr}`);
    let info: HarnessInfo;
    if (backend === "docker") {
      const redisUrl = await composeUp(targets.map((t) => t.service));
      undo.push(() => composeDown());
      info = {
        backend,
        redisUrl,
        rubyRedisBase: "redis://redis:6379",
        versions: targets.map((t) => t.version),
        rootfs: {},
        fixturesDir: "/opt/sidekiq-bridge/fixtures",
        logDir,
        composeFile: "docker-compose.yml",
      };
    } else if (backend === "local") {
      ensureDebianPackages({ "redis-server": "redis-server" });
      const rootfs = await prepareRootfs(targets);
      const fixturesDir = `/opt/sidekiq-bridge/${runId}`;
      for (const root of Object.values(rootfs)) {
        installFixtures(root, runId);
        undo.push(() => removeFixtures(root, fixturesDir));
      }
      // SIDEKIQ_BRIDGE_SERVER=valkey runs the suite on Debian's Valkey instead of Redis.
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
    console.log(
      `[sidekiq-bridge] ${backend} backend, real Sidekiq ${info.versions.join(", ")}, ${await serverVersion(info.redisUrl)} at ${info.redisUrl}, logs in ${logDir}`,
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
