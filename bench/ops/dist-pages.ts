// A dashboard built from one dist/, on the ops fleet's queues and 2,000
// processes (seed.ts), page by page: the quick loop for a change to a page
// (and `--cpu-prof` or `--trace-gc` through DASH_FLAGS), where bench:ops runs
// the whole comparison with Ruby.
//
//   DIST=dist PATHS=/busy,/queues N=21 npx tsx bench/ops/dist-pages.ts
//   DASH_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"   node flags for the dashboard,
//                    after the bin's own (a later --max-semi-space-size wins)
import { Redis } from "ioredis";
import { startRedis } from "../../harness/redis-server.js";
import { fleetSize, seedProcesses, seedQueues } from "./seed.js";
import { Dashboard } from "./sides.js";

const dist = process.env.DIST ?? "dist";
const paths = (process.env.PATHS ?? "/busy").split(",");
const runs = Number(process.env.N ?? 15);
const flags = (process.env.DASH_FLAGS ?? "").split(" ").filter(Boolean);

const server = await startRedis({ databases: 1 });
const redis = new Redis(server.url);
try {
  const size = fleetSize(1);
  await seedQueues(redis, size);
  await seedProcesses(redis, size.processes, size.jobsPerProcess, size.queues);
  const dash = await Dashboard.start(server.url, dist, flags);
  try {
    for (const p of paths) {
      const t = await dash.time(redis, p, runs);
      console.log(`${p}: median ${t.median_ms.toFixed(1)} ms (${runs} requests), Redis ${t.work.calls} calls`);
    }
  } finally {
    await dash.stop();
  }
} finally {
  redis.disconnect();
  await server.stop();
}
