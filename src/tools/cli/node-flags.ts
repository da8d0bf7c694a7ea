// The V8 flags `sidekiq-bridge` starts node with (the shebang of main.ts; a
// test keeps the two equal). A busy worker allocates fast, and V8 then grows
// the young generation to 2 x 16 MB semi-spaces although a few MB are live:
// 2 MB semi-spaces keep it small. Each young-generation collection moves what
// is still in use (the running jobs) to the old generation, which V8 lets
// grow to between 1.1 and 4 times what survived its last full collection (a
// factor it picks from its own GC speed); --heap-growing-percent=50 fixes the
// factor at 1.5. A worker draining at concurrency 10 on Node 20 peaked at
// 71-72 MB with both flags, 84-87 MB with the semi-spaces alone and 106 MB
// with neither, with no CPU cost a job seen on Node 20 and 4-8% on Node 24
// (bench/results/heap-flags.md).
// --v8-pool-size=1 leaves V8 one helper thread instead of four. The helpers
// (the optimizing compiler, concurrent marking, sweeping) share the worker's
// CPU with its event loop, and one that has the CPU keeps it until the
// scheduler's next tick (4 ms at HZ=250); with four, a job could wait behind
// two in turn. On one CPU, at 1,000 jobs/s on Node 20, enqueue-to-start p99 fell from
// 1.20-1.23 to 0.74-0.78 ms (Ruby's: 0.69-0.74), the longest wait for the CPU
// from 8 to 5 ms, peak RSS by 1-5 MB, and /busy at 2,000 processes took 52
// against 65 ms; on Node 24 the drains and RSS gained the same, p99 did not
// fall in the one run (bench/results/latency-tail.md, "one helper thread").
// Programs that embed the Worker can set the same in NODE_OPTIONS, or the V8
// flags from their own code with v8.setFlagsFromString (bench/README.md,
// "Memory"); --v8-pool-size is read at start only.
export const WORKER_NODE_FLAGS: readonly string[] = [
  "--max-semi-space-size=2",
  "--heap-growing-percent=50",
  "--v8-pool-size=1",
];
