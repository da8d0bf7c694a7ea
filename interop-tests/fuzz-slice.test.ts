// A slice of the differential fuzzer (`npm run fuzz`) on every release: Ruby
// writes generated records and Node's rewrites (retry, death, requeue,
// promotion, timestamp migration both ways, export and import) must leave
// what Ruby's leave or read back the same; Node's client writes them and
// Ruby's API, Web UI and a real worker must read the same arguments.
// About 2,000 cases in all: 40 s of one worker (55 s on a loaded machine).
import { expect, it } from "vitest";
import { FUZZ_QUEUES, generateCase } from "../chaos/fuzz/generator.js";
import { rigFor } from "../chaos/fuzz/interop-rig.js";
import { knownDifference } from "../chaos/fuzz/known.js";
import { nodeToRuby } from "../chaos/fuzz/node-to-ruby.js";
import { fieldsSource, type Mismatch } from "../chaos/fuzz/report.js";
import { rubyToNode } from "../chaos/fuzz/ruby-to-node.js";
import { describeEachSidekiq } from "./support/harness.js";

/** Cases per release and direction: 3 releases x 2 directions x 333 = about 2,000. */
const CASES = Number(process.env.FUZZ_SLICE_CASES ?? 333);
/** Fixed, so CI is repeatable (npm run fuzz explores other seeds); FUZZ_SEED picks another. */
const SEED = Number(process.env.FUZZ_SEED ?? 2026);

function unexplained(found: Mismatch[], version: string): string[] {
  return found
    .filter((m) => !knownDifference(m, version))
    .map(
      (m) =>
        `FUZZ_SEED=${SEED} case ${m.case.index}:\n  ${m.problems.join("\n  ")}\n  fields: ${fieldsSource(m.case.fields)}`,
    );
}

describeEachSidekiq("differential fuzzing against Ruby (a slice)", (sk) => {
  const rig = rigFor(sk);
  const cases = (offset: number) =>
    Array.from({ length: CASES }, (_, i) => generateCase(SEED, offset + i, sk.target.dialect));

  it(`Ruby -> Node: ${CASES} Ruby-written records through Node's rewrites (seed ${SEED})`, async () => {
    expect(unexplained(await rubyToNode(await rig(), cases(0)), sk.target.version)).toEqual([]);
  }, 120_000);

  it(`Node -> Ruby: ${CASES} Node-written jobs read by Ruby's API, Web UI and a real worker (seed ${SEED})`, async () => {
    const r = await rig();
    await r.startSidekiq({
      queues: [...FUZZ_QUEUES],
      require: "fuzz/worker.rb",
      concurrency: 5,
      env: { REDIS_URL: r.rubyUrl("worker") },
    });
    const found = await nodeToRuby(r, cases(CASES), { worker: true, workerWaitMs: 60_000 });
    expect(unexplained(found, sk.target.version)).toEqual([]);
  }, 120_000);
});
