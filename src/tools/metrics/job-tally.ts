// What the worker's jobs did, per class and queue, kept in plain numbers and
// handed to prom-client only when a scrape asks: prom-client's `inc` and
// `observe` hash the labels on every call, even through a child from
// `labels()`, and that cost was paid per job. The scrape reads the same as
// if every job had gone through prom-client: same samples, same order, the
// same float sums (added in the same order).
import type * as Prom from "prom-client";
import { type Observed, observeInto, scrapedHistogram } from "./plain-histogram.js";
import type { PromClient } from "./prom-client.js";

/** The labels of the job metrics, in prom-client's order. */
export interface JobLabels {
  class: string;
  queue: string;
}

const LABEL_NAMES = ["class", "queue"] as const;

/** The counters kept per class and queue. */
export type JobCount = "processed" | "failed" | "retried" | "dead";

/** One class and queue's counts and durations (the duration histogram's observations). */
export class JobTally implements Observed {
  processed = 0;
  failed = 0;
  retried = 0;
  dead = 0;
  count = 0;
  sum = 0;
  readonly buckets: number[];
  constructor(
    readonly labels: JobLabels & Record<string, string>,
    bounds: number,
  ) {
    this.buckets = new Array<number>(bounds).fill(0);
  }
}

export class JobTallies {
  private readonly byClass = new Map<string, Map<string, JobTally>>();
  /**
   * Per metric, the tallies in the order their first job reached it:
   * prom-client lists label sets in the order they first counted something.
   */
  private readonly order: Record<JobCount | "duration", JobTally[]> = {
    processed: [],
    failed: [],
    retried: [],
    dead: [],
    duration: [],
  };

  /** `bounds`: the duration histogram's buckets, as given to prom-client. */
  constructor(private readonly bounds: readonly number[]) {}

  /** The tally of a class on a queue (nested maps: no key string built per job). */
  get(className: string, queue: string): JobTally {
    let byQueue = this.byClass.get(className);
    if (!byQueue) this.byClass.set(className, (byQueue = new Map()));
    let t = byQueue.get(queue);
    if (!t) byQueue.set(queue, (t = new JobTally({ class: className, queue }, this.bounds.length)));
    return t;
  }

  inc(t: JobTally, what: JobCount): void {
    if (t[what]++ === 0) this.order[what].push(t);
  }

  /** prom-client's Histogram#observe, in plain numbers. */
  observe(t: JobTally, seconds: number): void {
    if (observeInto(t, this.bounds, seconds)) this.order.duration.push(t);
  }

  /**
   * A prom-client Counter that reads `what` at scrape time. Its `reset()`
   * (a registry's `resetMetrics()`) starts the count over, as before.
   */
  counter(prom: PromClient, what: JobCount, config: { name: string; help: string; registers: Prom.Registry[] }) {
    const order = this.order;
    const clear = (c: Prom.Counter<string>) => prom.Counter.prototype.reset.call(c);
    const counter = new prom.Counter({
      ...config,
      labelNames: LABEL_NAMES,
      collect() {
        clear(this);
        for (const t of order[what]) this.inc(t.labels, t[what]);
      },
    });
    counter.reset = () => {
      clear(counter);
      for (const t of order[what]) t[what] = 0;
      order[what] = [];
    };
    return counter;
  }

  /** A prom-client Histogram with these buckets that reads the durations at scrape time. */
  histogram(prom: PromClient, config: { name: string; help: string; registers: Prom.Registry[] }) {
    const order = this.order;
    return scrapedHistogram(
      prom,
      { ...config, labelNames: LABEL_NAMES },
      this.bounds,
      () => order.duration,
      () => (order.duration = []),
    );
  }
}
