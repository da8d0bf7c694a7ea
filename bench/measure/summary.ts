// Summaries of repeated runs: median, min and max; percentiles of samples.

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

export function summarize(runs: number[]): Summary {
  const s = [...runs].sort((a, b) => a - b);
  return { median: medianOfSorted(s), min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN, runs };
}

/** The median (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  return medianOfSorted([...xs].sort((a, b) => a - b));
}

function medianOfSorted(s: readonly number[]): number {
  const mid = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const s = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[Math.min(rank, s.length) - 1]!;
}
