// npm run prepare:env: builds (or checks) the root filesystems of the Sidekiq
// matrix and installs Debian's redis-server and chromium (the dashboard's
// browser tests), so a later test run starts fast.
import { ensureChromium, ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { selectedTargets } from "../harness/versions.js";

const targets = selectedTargets();
ensureDebianPackages({ "redis-server": "redis-server" });
ensureChromium();
const roots = await prepareRootfs(targets);
for (const t of targets) console.log(`Sidekiq ${t.version} (${t.suite}): ${roots[t.suite]}`);
