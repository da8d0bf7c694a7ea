// The running jobs' half of Busy (busy-pages.ts reads the fleet and hands
// each process's work hash here): every entry is offered to the page, and
// only the first `offset + count` of WorkSet#each's order (oldest run_at
// first) are kept; then one HGET per row reads its job again, and a job that
// finished in between is left out.
import type { Redis } from "ioredis";
import { execReplies } from "../redis/replies.js";
import { workKey } from "../wire/keys.js";
import { parseWork, type RunningWork } from "./process-hash.js";
import { Smallest } from "./smallest.js";

/** What Busy can be narrowed to: processes by host and queue, jobs by host, queue and class (the display class). */
export interface BusyFilter {
  host?: string;
  queue?: string;
  className?: string;
}

/** A page by position: 1-based `page`, `count` rows (or `offset` rows skipped, when given). */
export interface BusyPaging {
  page: number;
  count: number;
  offset?: number;
}

/** How many of the order a page needs kept: everything up to its last row. */
export function keptFor(paging: BusyPaging): number {
  return (paging.offset ?? (Math.max(1, paging.page) - 1) * paging.count) + paging.count;
}

/**
 * Ruby's `page_items` over the first items of an order of `total` (a page
 * past the end shows page 1), given at least `keptFor(paging)` of them.
 */
export function pageOf<T>(first: T[], total: number, paging: BusyPaging): { page: number; rows: T[] } {
  let page = Math.max(1, paging.page);
  let start = paging.offset ?? (page - 1) * paging.count;
  if (start > total && paging.offset === undefined) {
    start = 0;
    page = 1;
  }
  return { page, rows: first.slice(start, start + paging.count) };
}

export function textCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// A work entry read from its raw text without decoding it: the tens of
// thousands of entries off the page are read as the bytes Redis sent, run_at
// found in place and no string made of the entry, its payload or its
// arguments. Every Sidekiq writes `{"queue":…,"payload":…,"run_at":N}`; an
// entry written otherwise (no run_at, not JSON) is left to `parseWork`.

/** `"run_at":` as bytes (ASCII, so a match in the bytes is a match in the text). */
const RUN_AT = Buffer.from('"run_at":');
/** How far past `"run_at":` a number is read (31 bytes: any run_at Sidekiq writes, and no further). */
const NUMBER_SPAN = 31;

const MINUS = 0x2d;
const DOT = 0x2e;
const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * The wrapper's run_at from its bytes: the number after the last `"run_at":`
 * (`-?\d+(\.\d+)?`, within 31 bytes); undefined when there is none.
 */
function runAtOfBytes(entry: Buffer): number | undefined {
  const at = entry.lastIndexOf(RUN_AT);
  if (at < 0) return undefined;
  const start = at + RUN_AT.length;
  const end = Math.min(entry.length, start + NUMBER_SPAN);
  let i = start;
  if (entry[i] === MINUS) i++;
  const digits = i;
  let whole = 0;
  while (i < end && isDigit(entry[i])) whole = whole * 10 + entry[i++]! - 0x30;
  if (i === digits) return undefined;
  if (i + 1 < end && entry[i] === DOT && isDigit(entry[i + 1])) {
    i += 2;
    while (i < end && isDigit(entry[i])) i++;
    // A fraction is read as Number reads it (correctly rounded), from its few bytes.
    return Number(entry.toString("latin1", start, i));
  }
  // Digits alone are exact up to 2^53 (run_at is epoch seconds); longer ones are read as Number would.
  if (i - digits > 15) return Number(entry.toString("latin1", start, i));
  return entry[start] === MINUS ? -whole : whole;
}

/** The wrapper's queue from its text when it leads (as every Sidekiq writes it); undefined otherwise. */
function queueOf(json: string): string | undefined {
  const m = /^\{"queue":"((?:[^"\\]|\\.)*)"/.exec(json);
  if (!m) return undefined;
  return m[1]!.includes("\\") ? (JSON.parse(`"${m[1]!}"`) as string) : m[1]!;
}

/**
 * A `callBuffer("HGETALL", key)` reply: [field, value, …] as Redis sends it.
 * ioredis' `hgetall` turns it into strings and an object per hash: for
 * 20,000 running jobs that was most of Busy's time, and thread ids that look
 * like numbers became array indexes.
 */
function fieldsAndValues(reply: unknown, key: string): Buffer[] {
  if (!Array.isArray(reply)) throw new Error(`HGETALL ${key}: expected [field, value, …], got ${typeof reply}`);
  return reply as Buffer[];
}

interface WorkRef {
  runAt: number;
  process: string;
  tid: string;
  /** "work", or "workers" for a 6.0 – 6.4.1 writer. */
  hash: "work" | "workers";
}

/** The jobs page being gathered from the work hashes, as they are read. */
export class WorkPage {
  // Ties in any fixed order (Ruby's sort_by leaves them unordered); plain string order, no allocation per comparison.
  private readonly refs: Smallest<WorkRef>;
  private total = 0;
  /** Without a filter only run_at is read, from the entry's bytes; a filter reads the entry's text. */
  private readonly text: boolean;

  constructor(
    private readonly filter: BusyFilter,
    private readonly paging: BusyPaging,
  ) {
    this.refs = new Smallest<WorkRef>(
      keptFor(paging),
      (a, b) => a.runAt - b.runAt || textCompare(a.process, b.process) || textCompare(a.tid, b.tid),
    );
    this.text = filter.queue !== undefined || filter.className !== undefined;
  }

  /**
   * One process's work hash, a `callBuffer("HGETALL")` reply. False when it
   * is empty: a 6.0 – 6.4.1 writer keeps its work in `:workers` (`addLegacy`).
   */
  addHash(process: string, reply: unknown, hash: WorkRef["hash"]): boolean {
    const pairs = fieldsAndValues(reply, workKey(process, hash));
    for (let k = 0; k < pairs.length; k += 2) this.keep(process, pairs[k]!, pairs[k + 1]!, hash);
    return pairs.length > 0;
  }

  /** The `:workers` hashes of processes whose `:work` was empty. */
  async addLegacy(redis: Redis, processes: string[]): Promise<void> {
    if (processes.length === 0) return;
    const pipe = redis.pipeline();
    for (const p of processes) pipe.callBuffer("HGETALL", workKey(p, "workers"));
    const res = execReplies(await pipe.exec(), "workers");
    processes.forEach((p, i) => this.addHash(p, res[i], "workers"));
  }

  /** The page's rows, each job read again (one HGET a row). */
  async finish(redis: Redis): Promise<{ total: number; page: number; rows: RunningWork[] }> {
    const { total } = this;
    const { page, rows } = pageOf(this.refs.sorted(), total, this.paging);
    if (rows.length === 0) return { total, page, rows: [] };
    const pipe = redis.pipeline();
    for (const r of rows) pipe.hget(workKey(r.process, r.hash), r.tid);
    const jsons = execReplies(await pipe.exec(), "work page") as Array<string | null>;
    const out: RunningWork[] = [];
    rows.forEach((r, i) => {
      const json = jsons[i];
      if (!json) return; // finished since it was listed
      const w = parseWork(r.process, r.tid, json);
      if (w) out.push(w);
    });
    return { total, page, rows: out };
  }

  private offer(runAt: number, process: string, tid: string | Buffer, hash: WorkRef["hash"]): void {
    this.total++;
    // Most entries are turned away here, before a thread id string is made of them.
    const last = this.refs.last;
    if (last !== undefined && runAt > last.runAt) return;
    this.refs.offer({ runAt, process, tid: tid.toString(), hash });
  }

  private keep(process: string, tid: Buffer, entry: Buffer, hash: WorkRef["hash"]): void {
    if (this.text) return this.keepText(process, tid.toString(), entry, hash);
    if (entry.length === 0) return;
    const runAt = runAtOfBytes(entry);
    if (runAt !== undefined) return this.offer(runAt, process, tid, hash);
    const w = parseWork(process, tid.toString(), entry.toString());
    if (w) this.offer(w.runAt, process, w.tid, hash);
  }

  private keepText(process: string, tid: string, entry: Buffer, hash: WorkRef["hash"]): void {
    const { filter } = this;
    if (entry.length === 0) return;
    const json = entry.toString();
    let runAt = runAtOfBytes(entry);
    let queue = filter.queue === undefined ? undefined : queueOf(json);
    if (filter.className !== undefined) {
      if (!json.includes(filter.className)) return;
      const w = parseWork(process, tid, json);
      if (!w || w.displayClass !== filter.className) return;
      runAt = w.runAt;
      queue = w.queue;
    } else if (runAt === undefined || (filter.queue !== undefined && queue === undefined)) {
      const w = parseWork(process, tid, json);
      if (!w) return;
      runAt = w.runAt;
      queue = w.queue;
    }
    if (filter.queue !== undefined && queue !== filter.queue) return;
    this.offer(runAt ?? 0, process, tid, hash);
  }
}
