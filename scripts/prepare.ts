// npm run prepare:env: builds (or checks) the root filesystems of the Sidekiq
// matrix and Debian forky's Node.js 24, installs Debian's redis-server,
// chromium (the dashboard's browser tests), docker.io and the Compose plugin,
// so a later test run starts fast.
import { ensureComposePlugin } from "../harness/docker-engine.js";
import { buildRootfs } from "../harness/local-backend.js";
import { ensureChromium, ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { selectedTargets } from "../harness/versions.js";

const targets = selectedTargets();
ensureDebianPackages({ "redis-server": "redis-server" });
ensureChromium();
const roots = await prepareRootfs(targets);
for (const t of targets) console.log(`Sidekiq ${t.version} (${t.suite}): ${roots[t.suite]}`);
console.log(`Node.js 24 (forky): ${buildRootfs("node24")}`);
ensureDebianPackages({ dockerd: "docker.io" });
ensureComposePlugin();
console.log("Docker engine and Compose plugin: installed (npm run test:docker starts dockerd when it is not running)");
