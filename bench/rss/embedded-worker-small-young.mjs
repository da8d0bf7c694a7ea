// The embedded Worker of embedded-worker.mjs, in an application that tunes
// V8's heap from its own code instead of command-line flags:
// `--semi-space-growth-factor=1` keeps the semi-spaces at their starting size
// (the flag is read when the young generation would grow, so setting it at
// run time works; `--max-semi-space-size` is read once, at start-up, and
// does not), and `--heap-growing-percent=50` lets the old generation grow by
// half of what survived its last full collection before the next, as the
// CLI's flag does (read at each full collection).
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--semi-space-growth-factor=1 --heap-growing-percent=50");
await import("./embedded-worker.mjs");
