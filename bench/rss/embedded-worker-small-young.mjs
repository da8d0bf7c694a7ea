// The embedded Worker of embedded-worker.mjs, in an application that caps
// V8's young generation from its own code instead of a command-line flag:
// `--semi-space-growth-factor=1` keeps the semi-spaces at their starting size
// (the flag is read when the young generation would grow, so setting it at
// run time works; `--max-semi-space-size` is read once, at start-up, and
// does not).
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--semi-space-growth-factor=1");
await import("./embedded-worker.mjs");
