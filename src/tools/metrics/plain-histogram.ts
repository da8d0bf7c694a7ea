// Histograms kept in plain numbers and handed to prom-client only when a
// scrape asks. prom-client's `observe` converts and hashes the labels on
// every call (about 3 µs on a drain, paid per fetch), even through a child
// from `labels()`. The scrape reads the same as if every value had gone
// through prom-client: same samples, same order, the same float sums (added
// in the same order).
import type * as Prom from "prom-client";
import type { PromClient } from "./prom-client.js";

/** One label set's observations: how many, their sum, and per bound (not cumulative) how many fell in it. */
export interface Observed {
  readonly labels: Record<string, string>;
  count: number;
  sum: number;
  readonly buckets: number[];
}

/** A label set with nothing observed yet. */
export function observed(labels: Record<string, string>, bounds: readonly number[]): Observed {
  return { labels, count: 0, sum: 0, buckets: new Array<number>(bounds.length).fill(0) };
}

/**
 * prom-client's Histogram#observe in plain numbers: the first bound the value
 * is within (none past the last). True on the label set's first observation
 * (since a reset), which is when prom-client lists it.
 */
export function observeInto(t: Observed, bounds: readonly number[], value: number): boolean {
  const first = t.count++ === 0;
  t.sum += value;
  for (let i = 0; i < bounds.length; i++) {
    if (value <= bounds[i]!) {
      t.buckets[i]!++;
      break;
    }
  }
  return first;
}

/** prom-client's Histogram entries (not in its typings): what `zero()` creates per label set. */
interface HistogramEntry {
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

export interface ScrapedHistogramConfig {
  name: string;
  help: string;
  labelNames: readonly string[];
  registers: Prom.Registry[];
}

/**
 * A prom-client Histogram with `bounds` that reads `listed()` (the label sets
 * in the order of their first observation) at scrape time. Its `reset()` (a
 * registry's `resetMetrics()`) zeroes them, then `unlist()` empties the list.
 */
export function scrapedHistogram(
  prom: PromClient,
  config: ScrapedHistogramConfig,
  bounds: readonly number[],
  listed: () => readonly Observed[],
  unlist: () => void,
): Prom.Histogram<string> {
  const clear = (h: Prom.Histogram<string>) => prom.Histogram.prototype.reset.call(h);
  const histogram = new prom.Histogram({
    ...config,
    labelNames: [...config.labelNames],
    buckets: [...bounds],
    collect() {
      clear(this);
      const order = listed();
      // zero() makes each label set's entry (prom-client hashes the labels); they are then filled in.
      for (const t of order) this.zero(t.labels);
      const entries = Object.values((this as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap);
      if (entries.length !== order.length || (entries[0] && typeof entries[0].sum !== "number"))
        throw new Error(`${config.name}: this prom-client's Histogram keeps its values in an unknown shape`);
      entries.forEach((e, n) => {
        const t = order[n]!;
        e.sum = t.sum;
        e.count = t.count;
        // `+=`: a bound given twice is one entry in prom-client.
        for (let i = 0; i < bounds.length; i++) e.bucketValues[bounds[i]!]! += t.buckets[i]!;
      });
    },
  });
  histogram.reset = () => {
    clear(histogram);
    for (const t of listed()) {
      t.count = 0;
      t.sum = 0;
      t.buckets.fill(0);
    }
    unlist();
  };
  return histogram;
}

/**
 * A histogram by one label (the fetch durations by capsule): a map from the
 * label's value to its observations.
 */
export class KeyedHistogram {
  private readonly byKey = new Map<string, Observed>();
  private order: Observed[] = [];

  constructor(
    private readonly label: string,
    private readonly bounds: readonly number[],
  ) {}

  observe(key: string, value: number): void {
    let t = this.byKey.get(key);
    if (!t) this.byKey.set(key, (t = observed({ [this.label]: key }, this.bounds)));
    if (observeInto(t, this.bounds, value)) this.order.push(t);
  }

  /** The prom-client Histogram that reads these at scrape time. */
  histogram(prom: PromClient, config: Omit<ScrapedHistogramConfig, "labelNames">): Prom.Histogram<string> {
    return scrapedHistogram(
      prom,
      { ...config, labelNames: [this.label] },
      this.bounds,
      () => this.order,
      () => (this.order = []),
    );
  }
}
