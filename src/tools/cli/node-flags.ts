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
// Programs that embed the Worker can set the same in NODE_OPTIONS, or from
// their own code with v8.setFlagsFromString (README, "Performance").
export const WORKER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--heap-growing-percent=50"];
