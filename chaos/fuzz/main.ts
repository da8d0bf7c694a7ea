// npm run fuzz: differential fuzzing of job records against real Ruby Sidekiq,
// both directions, on every release of the matrix. FUZZ_CASES cases per
// release and direction (default 100,000), FUZZ_SEED (default 1), FUZZ_BATCH
// cases per Ruby process (default 2,000), SIDEKIQ_VERSIONS to narrow the
// releases, FUZZ_DIRECTIONS (`ruby-to-node,node-to-ruby`, in that order by
// default) to run one direction or change their order. Prints `N cases, M mismatches` per release and direction, and each
// distinct failure shrunk to a minimal case, as a regression test to paste.
// Needs root (the releases run in their root filesystems) and redis-server.
import { selectedTargets } from "../../harness/versions.js";
import { generateCase, FUZZ_QUEUES, type FuzzCase } from "./generator.js";
import { knownDifference, KNOWN_DIFFERENCES } from "./known.js";
import { localRigs } from "./local-rig.js";
import { nodeToRuby } from "./node-to-ruby.js";
import { regressionTest, type Direction, type Mismatch } from "./report.js";
import type { FuzzRig } from "./rig.js";
import { rubyToNode } from "./ruby-to-node.js";
import { shrink } from "./shrink.js";

const total = Number(process.env.FUZZ_CASES ?? 100_000);
const seed = Number(process.env.FUZZ_SEED ?? 1);
const batchSize = Number(process.env.FUZZ_BATCH ?? 2000);
const DIRECTIONS = ["ruby-to-node", "node-to-ruby"] as const;
const directions = (process.env.FUZZ_DIRECTIONS ?? DIRECTIONS.join(",")).split(",").map((d) => {
  const known = DIRECTIONS.find((x) => x === d.trim());
  if (!known) throw new Error(`FUZZ_DIRECTIONS: unknown direction ${JSON.stringify(d)} (${DIRECTIONS.join(", ")})`);
  return known;
});
/** Shrunk and printed per release and direction: the first failures only (more are usually the same). */
const SHRINK_AT_MOST = 3;

const targets = selectedTargets();
const { rigs, close } = await localRigs(targets);
// Interrupted: stop the workers and Redis, remove this run's fixtures.
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.once(sig, () => void close().finally(() => process.exit(130)));

const run = (rig: FuzzRig, direction: Direction, cases: FuzzCase[]): Promise<Mismatch[]> =>
  direction === "ruby-to-node"
    ? rubyToNode(rig, cases)
    : nodeToRuby(rig, cases, { worker: true, workerWaitMs: 300_000 });

const lines: string[] = [];
try {
  for (const rig of rigs) {
    await rig.startSidekiq({
      queues: [...FUZZ_QUEUES],
      require: "fuzz/worker.rb",
      concurrency: 10,
      env: { REDIS_URL: rig.rubyUrl("worker") },
    });
    for (const direction of directions) {
      const started = Date.now();
      const failures: Mismatch[] = [];
      for (let from = 0; from < total; from += batchSize) {
        const cases = Array.from({ length: Math.min(batchSize, total - from) }, (_, i) =>
          generateCase(seed, from + i, rig.target.dialect),
        );
        const found = await run(rig, direction, cases);
        failures.push(...found);
        console.error(
          `  Sidekiq ${rig.target.version} ${direction}: ${from + cases.length} cases, ${failures.length} mismatches`,
        );
        // A batch's first new mismatch at once, so a long run shows what it finds as it goes.
        if (found.length)
          console.error(`    e.g. case ${found[0]!.case.index}: ${found[0]!.problems[0]!.slice(0, 600)}`);
      }
      const known = failures.filter((m) => knownDifference(m, rig.target.version));
      const unknown = failures.filter((m) => !known.includes(m));
      const knownNote = known.length
        ? ` (${known.length} of them known: ${[...new Set(known.map((m) => knownDifference(m, rig.target.version)!.name))].join(", ")})`
        : "";
      const line = `Sidekiq ${rig.target.version} ${direction}: ${total} cases, ${failures.length} mismatches${knownNote} (seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s)`;
      console.log(line);
      lines.push(line);
      for (const m of unknown.slice(0, SHRINK_AT_MOST)) {
        console.log(`\ncase ${m.case.index} (FUZZ_SEED=${seed}):\n  ${m.problems.join("\n  ")}`);
        const small = await shrink(m, async (batch) => {
          const again = await run(rig, direction, batch);
          return new Map(again.map((x) => [x.case.index, x]));
        });
        console.log(
          `\nshrunk:\n  ${small.problems.join("\n  ")}\nas a regression test:\n${regressionTest(small, rig.target.version)}`,
        );
      }
    }
  }
} finally {
  await close();
}
console.log(`\n${lines.join("\n")}`);
for (const k of KNOWN_DIFFERENCES) console.log(`\nknown: ${k.name}: ${k.why}`);
