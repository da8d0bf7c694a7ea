// npm run fixtures:capture: makes each real Sidekiq of the matrix write every
// record kind and stores them in ruby-fixtures/captures/<version>.json.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { capture } from "../harness/capture.js";
import { FIXTURES_SRC, LocalBackend, installFixtures, removeFixtures } from "../harness/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../harness/prepare.js";
import { startRedis } from "../harness/redis-server.js";
import { selectedTargets } from "../harness/versions.js";
import { tmpdir } from "node:os";

const targets = selectedTargets();
ensureDebianPackages({ "redis-server": "redis-server" });
const roots = await prepareRootfs(targets);
const runId = `capture-${randomBytes(3).toString("hex")}`;
const inside = `/opt/sidekiq-bridge/${runId}`;
for (const root of Object.values(roots)) installFixtures(root, runId);
const redis = await startRedis();
try {
  const backend = new LocalBackend(roots, inside, join(tmpdir(), runId), redis.url);
  const docs = await Promise.all(targets.map((t, i) => capture(backend, t, i + 1)));
  for (const doc of docs) {
    const file = join(FIXTURES_SRC, "captures", `${doc.sidekiq_version}.json`);
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    console.log(
      `${file}: ${doc.records.length} records from Sidekiq ${doc.sidekiq_version} (Ruby ${doc.ruby_version})`,
    );
  }
} finally {
  await redis.stop();
  for (const root of Object.values(roots)) removeFixtures(root, inside);
}
