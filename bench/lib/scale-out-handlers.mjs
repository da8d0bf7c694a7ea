// The no-op job of bench/scale-out.ts, for `sidekiq-bridge worker -r`. Each
// worker process writes how many jobs it has run to $BENCH_DONE_DIR/<pid>
// (every 20 ms while it changes), so the bench sees the end of a drain without
// sending Redis a single extra command.
import { writeFileSync } from "node:fs";
import { setInterval } from "node:timers";
import { join } from "node:path";

const file = join(process.env.BENCH_DONE_DIR, String(process.pid));
let ran = 0;
let written = -1;
setInterval(() => {
  if (ran === written) return;
  written = ran;
  writeFileSync(file, String(ran));
}, 20).unref();

export default (worker) => {
  worker.register("BenchNoopJob", () => void ran++);
};
