// The V8 flags `sidekiq-bridge` starts node with (the shebang of main.ts; a
// test keeps the two equal). A busy worker allocates fast, and V8 then grows
// the young generation to 2 x 16 MB semi-spaces although a few MB are live:
// 2 MB semi-spaces keep a draining worker near 85 MB RSS instead of 110 MB,
// at no measurable CPU cost (bench/results). Programs that embed the Worker
// can do the same with NODE_OPTIONS="--max-semi-space-size=2".
export const WORKER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=2"];
