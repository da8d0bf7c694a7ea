// Page numbers from the query string, as Sidekiq's Web UI uses them
// (`?page=2&count=25`): 1-based, bounded, turned into a Redis range.

export const DEFAULT_COUNT = 25;
export const MAX_COUNT = 500;

export interface Paging {
  /** 1-based. */
  page: number;
  count: number;
  /** The first index (LRANGE / ZREVRANGE start). */
  offset: number;
}

function positiveInt(v: string | null, dflt: number, max: number): number {
  if (v === null || !/^\d{1,9}$/.test(v)) return dflt;
  const n = Number(v);
  return n < 1 ? dflt : Math.min(n, max);
}

export function paging(query: URLSearchParams, defaultCount = DEFAULT_COUNT): Paging {
  const count = positiveInt(query.get("count"), defaultCount, MAX_COUNT);
  const page = positiveInt(query.get("page"), 1, 1e9);
  return { page, count, offset: (page - 1) * count };
}

/** The number of pages for `total` items (at least 1). */
export function pageCount(total: number, count: number): number {
  return Math.max(1, Math.ceil(total / count));
}
