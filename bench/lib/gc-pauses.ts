// A Node child's own GC pauses during a latency run, and which of the slowest
// jobs waited through one: the worker's share of the tail, measured in the
// run the figure comes from. A job waited through a pause when the pause
// ended after the job was pushed and before it started (its wait included
// the pause's end); kinds are Node's (perf_hooks.constants).
import {
  constants,
  monitorEventLoopDelay,
  PerformanceObserver,
  performance,
  type IntervalHistogram,
  type PerformanceEntry,
} from "node:perf_hooks";
import { nowMs } from "../../src/core/wire/timestamps.js";

/** What a run's pauses were, by kind, and how many of its slowest jobs waited through each kind. */
export interface GcTail {
  /** Scavenges: count, longest pause (ms). */
  minor: { n: number; maxMs: number };
  /** Full (mark-compact) collections. */
  major: { n: number; maxMs: number };
  /** The `slowest` jobs looked at (the run's 0.1% slowest, at least one). */
  slowest: number;
  /** Of those, how many waited through a full collection, and through a scavenge only. */
  slowestOnMajor: number;
  slowestOnMinorOnly: number;
  /**
   * The event loop's delay (ms, sampled every millisecond): its longest
   * shows whether the process itself stalled as long as the slowest jobs waited.
   */
  loopDelay: { p99: number; max: number };
}

type Pause = [end: number, duration: number, kind: number];

export class GcPauses {
  private pauses: Pause[] = [];
  private readonly observer = new PerformanceObserver((list) => {
    // Wall-clock ends (nowMs), comparable with the pusher's timestamps.
    const offset = nowMs() - performance.now();
    for (const e of list.getEntries()) this.pauses.push([offset + e.startTime + e.duration, e.duration, kindOf(e)]);
  });

  private loop: IntervalHistogram | undefined;

  start(): void {
    this.pauses = [];
    this.observer.observe({ entryTypes: ["gc"] });
    this.loop = monitorEventLoopDelay({ resolution: 1 });
    this.loop.enable();
  }

  /** Stops observing; `latencies[i]` is job i's wait (ms) and `starts[i]` when it started (nowMs), `n` of each. */
  stop(latencies: Float64Array, starts: Float64Array, n: number): GcTail {
    this.observer.disconnect();
    this.loop?.disable();
    const tail: GcTail = {
      minor: { n: 0, maxMs: 0 },
      major: { n: 0, maxMs: 0 },
      slowest: 0,
      slowestOnMajor: 0,
      slowestOnMinorOnly: 0,
      loopDelay: { p99: (this.loop?.percentile(99) ?? 0) / 1e6, max: (this.loop?.max ?? 0) / 1e6 },
    };
    for (const [, ms, kind] of this.pauses) {
      const k =
        kind === constants.NODE_PERFORMANCE_GC_MAJOR
          ? tail.major
          : kind === constants.NODE_PERFORMANCE_GC_MINOR
            ? tail.minor
            : undefined;
      if (k) {
        k.n++;
        k.maxMs = Math.max(k.maxMs, ms);
      }
    }
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => latencies[b]! - latencies[a]!);
    tail.slowest = Math.max(1, Math.floor(n / 1000));
    for (const i of order.slice(0, tail.slowest)) {
      const [from, to] = [starts[i]! - latencies[i]!, starts[i]!];
      const through = this.pauses.filter(([end]) => end >= from && end <= to);
      if (through.some(([, , kind]) => kind === constants.NODE_PERFORMANCE_GC_MAJOR)) tail.slowestOnMajor++;
      else if (through.length > 0) tail.slowestOnMinorOnly++;
    }
    return tail;
  }
}

function kindOf(e: PerformanceEntry): number {
  return (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0;
}
