// npm run prepare:env: builds (or checks) the root filesystems of the Sidekiq
// matrix and Debian forky's Node.js 24, installs Debian's redis-server,
// chromium (the dashboard's browser tests), docker.io and the Compose plugin,
// so a later test run starts fast. For `docker compose up` by hand
// (docs/DOCKER.md) it writes `.env` when the Debian mirror serves expired
// Release files, and imports the cached trees as the debian:<suite> base
// images when a Docker engine is running.
import { spawnSync } from "node:child_process";
import { aptOptionsForBuilds, ensureComposePlugin, ensureDebianBaseImages } from "../harness/docker-engine.js";
import { buildRootfs } from "../harness/local-backend.js";
import { ensureChromium, ensureDebianPackages, prepareRootfs, updateComposeEnv } from "../harness/prepare.js";
import { MATRIX, selectedTargets } from "../harness/versions.js";

const targets = selectedTargets();
ensureDebianPackages({ "redis-server": "redis-server" });
ensureChromium();
const roots = await prepareRootfs(targets);
for (const t of targets) console.log(`Sidekiq ${t.version} (${t.suite}): ${roots[t.suite]}`);
console.log(`Node.js 24 (forky): ${buildRootfs("node24")}`);
ensureDebianPackages({ dockerd: "docker.io" });
ensureComposePlugin();
console.log("Docker engine and Compose plugin: installed (npm run test:docker starts dockerd when it is not running)");
console.log(updateComposeEnv(await aptOptionsForBuilds()));
if (spawnSync("docker", ["info"], { stdio: "ignore" }).status === 0) {
  // docker-compose.yml builds every image FROM debian:<suite>; with no image registry these are the only source.
  const suites = [...new Set(["bookworm", ...MATRIX.map((t) => t.suite)])];
  ensureDebianBaseImages(suites);
  console.log(`Docker base images: ${suites.map((s) => `debian:${s}`).join(", ")} present`);
} else {
  console.log(
    "Docker base images: no Docker engine running; docker compose pulls debian:<suite>, or run this again with dockerd running to import them from the cached trees",
  );
}
