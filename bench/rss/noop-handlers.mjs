// The job of bench/drain-rss.ts for the CLI worker (`-r`): BenchNoopJob does
// nothing but count; at the last of DRAIN_JOBS it prints the process's peak
// RSS (VmHWM) as one JSON line, so the figure is read inside the measured
// process, over the whole drain.
import { readFileSync } from "node:fs";

const total = Number(process.env.DRAIN_JOBS);
let ran = 0;
let atFirstJob = 0;

export function peakRss() {
  const status = readFileSync("/proc/self/status", "utf8");
  const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  const m = process.memoryUsage();
  return {
    peakMB: kb("VmHWM") / 1024,
    rssMB: kb("VmRSS") / 1024,
    heapUsedMB: m.heapUsed / 2 ** 20,
    heapTotalMB: m.heapTotal / 2 ** 20,
    externalMB: m.external / 2 ** 20,
    arrayBuffersMB: m.arrayBuffers / 2 ** 20,
  };
}

export default (worker) => {
  worker.register("BenchNoopJob", () => {
    // The peak before the first job is what starting the worker cost.
    if (++ran === 1) atFirstJob = peakRss().peakMB;
    if (ran === total) console.log(`DRAIN_RSS ${JSON.stringify({ ...peakRss(), atFirstJobMB: atFirstJob })}`);
  });
};
