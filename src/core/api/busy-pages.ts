// Busy a page at a time, for fleets of thousands of processes and tens of
// thousands of running jobs. Ruby's Web UI reads the whole fleet several
// times per request (ProcessSet#each for the table and again for each total,
// WorkSet#size, WorkSet#each) and renders every process. Here the fleet is
// read once, in pipelines of BATCH processes all sent at once, keeping from
// each only the totals and what may still be on the page (smallest.ts), and
// only the page's rows are built:
//
//   processes  SSCAN processes; per batch HMGET info concurrency busy beat
//              quiet rss rtt_us: the totals (threads, busy, RSS) and the
//              rows in the order of Ruby's `sorted_processes` (7.x and 8.x:
//              hostname in natural order, when every process has one; else
//              identity, the only order of 6.x's Busy).
//   jobs       per batch HGETALL <identity>:work (and :workers, what 6.0 to
//              6.4.1 write, when :work is empty), as bytes; each value's
//              run_at is read from its bytes, its queue from its text under
//              a queue filter, and the payload is parsed only when a class
//              filter has to look at it. The page is the
//              `count` oldest run_at from `offset` (WorkSet#each's order),
//              then one HGET per row reads its job; a job that finished in
//              between is left out.
import { execReplies } from "../redis/replies.js";
import { PROCESSES_KEY, workKey } from "../wire/keys.js";
import { releaseRules } from "../wire/release-rules.js";
import { byteCompare, sscanAll, toI, type ApiContext } from "./context.js";
import { parseWork, processFromHash, type ProcessInfo, type RunningWork } from "./process-hash.js";
import { Smallest } from "./smallest.js";

/**
 * Processes read per pipeline. A pipeline's replies all stay alive until its
 * last one arrives, and each young-generation collection copies what is alive:
 * 500 processes' work hashes (1.5 MB of text) made collections cost more than
 * reading them. Small pipelines, all in flight together, cost no round trip more.
 */
const BATCH = 50;
const FIELDS = ["info", "concurrency", "busy", "beat", "quiet", "rss", "rtt_us"] as const;

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

/** One page of Busy, with the fleet's totals. */
export interface BusyPage {
  totals: {
    /** SCARD processes, as Ruby's card (may count a process that just died). */
    processes: number;
    threads: number;
    /** The sum of every process's `busy` field (Ruby's `WorkSet#size`). */
    busy: number;
    /**
     * The sum of `busy` over every member of `processes`, with or without a
     * heartbeat hash (`Stats#workers_size`, the summary bar's figure).
     */
    workersSize: number;
    /** KB. */
    rss: number;
  };
  /** The processes matching the filter, and this page of them (absent with `only: "jobs"`). */
  processes?: { total: number; page: number; rows: ProcessInfo[] };
  /** The running jobs matching the filter, and this page of them (absent with `only: "processes"`). */
  jobs?: { total: number; page: number; rows: RunningWork[] };
}

function textCompare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Ruby's `sorted_processes` key: the hostname cut into text and numbers (`split(/(\d+)/)`). */
function naturalKey(hostname: string): Array<string | number> {
  return hostname.split(/(\d+)/).map((a) => (/^\d+$/.test(a) ? Number(a) : a));
}

function compareNatural(a: Array<string | number>, b: Array<string | number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return textCompare(x, y);
  }
  return a.length - b.length;
}

/** `info`'s hostname read from its text (the first "hostname" key with a string value); undefined when it is not there. */
function hostnameOf(info: string): string | undefined {
  const m = /"hostname":"((?:[^"\\]|\\.)*)"/.exec(info);
  if (!m) return undefined;
  return m[1]!.includes("\\") ? (JSON.parse(`"${m[1]!}"`) as string) : m[1]!;
}

/** How many of the order a page needs kept: everything up to its last row. */
function keptFor(paging: BusyPaging): number {
  return (paging.offset ?? (Math.max(1, paging.page) - 1) * paging.count) + paging.count;
}

/**
 * Ruby's `page_items` over the first items of an order of `total` (a page
 * past the end shows page 1), given at least `keptFor(paging)` of them.
 */
function pageOf<T>(first: T[], total: number, paging: BusyPaging): { page: number; rows: T[] } {
  let page = Math.max(1, paging.page);
  let start = paging.offset ?? (page - 1) * paging.count;
  if (start > total && paging.offset === undefined) {
    start = 0;
    page = 1;
  }
  return { page, rows: first.slice(start, start + paging.count) };
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
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

interface ProcessRow {
  id: string;
  values: Array<string | null>;
  p?: ProcessInfo;
  /** The hostname in natural order's parts (empty once some process has no hostname). */
  key: Array<string | number>;
}

interface WorkRef {
  runAt: number;
  process: string;
  tid: string;
  /** "work", or "workers" for a 6.0 – 6.4.1 writer. */
  hash: "work" | "workers";
}

/** One page of Busy (processes, jobs or both) and the fleet's totals, reading the fleet in pipelined batches. */
export async function busyPage(
  ctx: ApiContext,
  opts: {
    filter?: BusyFilter;
    processes?: BusyPaging;
    jobs?: BusyPaging;
  },
): Promise<BusyPage> {
  const { redis } = ctx;
  const filter = opts.filter ?? {};
  const [ids, size] = await Promise.all([
    sscanAll(redis, PROCESSES_KEY).then((a) => a.sort(textCompare)),
    redis.scard(PROCESSES_KEY),
  ]);
  const totals = { processes: size, threads: 0, busy: 0, workersSize: 0, rss: 0 };
  // The page's processes in both of Ruby's orders, as which one applies is known only once every process is read.
  const k = opts.processes ? keptFor(opts.processes) : 0;
  const byName = new Smallest<ProcessRow>(k, (a, b) => compareNatural(a.key, b.key) || textCompare(a.id, b.id));
  const byId = new Smallest<ProcessRow>(k, (a, b) => byteCompare(a.id, b.id));
  let matching = 0;
  const jobHosts: string[] = [];
  let byHostname = releaseRules(ctx.rules).api.busyByHostname;
  const readProcesses = async (batch: string[]) => {
    const pipe = redis.pipeline();
    for (const id of batch) pipe.hmget(id, ...FIELDS);
    const res = execReplies(await pipe.exec(), "processes");
    batch.forEach((id, i) => {
      const values = res[i] as Array<string | null>;
      totals.workersSize += toI(values[2]);
      const info = values[0];
      if (info === null || info === undefined) return;
      // Only the page's rows need the whole `info`: the totals and the order need three fields and the hostname.
      let hostname = hostnameOf(info);
      let p: ProcessInfo | undefined;
      if (hostname === undefined || !values[1] || filter.queue !== undefined) {
        p = processFromHash(id, values);
        if (!p) return;
        hostname = p.hostname;
      }
      totals.threads += p ? p.concurrency : toI(values[1]);
      totals.busy += toI(values[2]);
      totals.rss += toI(values[5]);
      if (hostname === undefined) byHostname = false;
      if (filter.host !== undefined && hostname !== filter.host) return;
      jobHosts.push(id);
      if (filter.queue !== undefined && !p!.queues.includes(filter.queue)) return;
      if (!opts.processes) return;
      matching++;
      const row = { id, values, p, key: byHostname ? naturalKey(hostname ?? "") : [] };
      if (byHostname) byName.offer(row);
      byId.offer(row);
    });
  };
  // Every order below is total, so the order the pipelines answer in does not matter.
  await Promise.all(chunks(ids, BATCH).map(readProcesses));
  const out: BusyPage = { totals };
  if (opts.processes) {
    // Ruby 7+: hostname in natural order; 6.x (or a process without one): identity, bytewise as Ruby's String#<=>.
    const first = (byHostname ? byName : byId).sorted();
    const { page, rows } = pageOf(first, matching, opts.processes);
    const built = rows.flatMap((r) => r.p ?? processFromHash(r.id, r.values) ?? []);
    out.processes = { total: matching, page, rows: built };
  }
  if (opts.jobs) out.jobs = await jobsPage(ctx, jobHosts, filter, opts.jobs);
  return out;
}

async function jobsPage(
  ctx: ApiContext,
  procs: string[],
  filter: BusyFilter,
  paging: BusyPaging,
): Promise<NonNullable<BusyPage["jobs"]>> {
  const { redis } = ctx;
  // Ties in any fixed order (Ruby's sort_by leaves them unordered); plain string order, no allocation per comparison.
  const refs = new Smallest<WorkRef>(
    keptFor(paging),
    (a, b) => a.runAt - b.runAt || textCompare(a.process, b.process) || textCompare(a.tid, b.tid),
  );
  let total = 0;
  const offer = (runAt: number, process: string, tid: string | Buffer, hash: WorkRef["hash"]) => {
    total++;
    // Most entries are turned away here, before a thread id string is made of them.
    const last = refs.last;
    if (last !== undefined && runAt > last.runAt) return;
    refs.offer({ runAt, process, tid: tid.toString(), hash });
  };
  // Without a filter only run_at is read, from the entry's bytes; a filter reads the entry's text.
  const text = filter.queue !== undefined || filter.className !== undefined;
  const keepText = (process: string, tid: string, entry: Buffer, hash: WorkRef["hash"]) => {
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
    offer(runAt ?? 0, process, tid, hash);
  };
  const keep = (process: string, tid: Buffer, entry: Buffer, hash: WorkRef["hash"]) => {
    if (text) return keepText(process, tid.toString(), entry, hash);
    if (entry.length === 0) return;
    const runAt = runAtOfBytes(entry);
    if (runAt !== undefined) return offer(runAt, process, tid, hash);
    const w = parseWork(process, tid.toString(), entry.toString());
    if (w) offer(w.runAt, process, w.tid, hash);
  };
  const readWork = async (batch: string[]) => {
    const pipe = redis.pipeline();
    for (const p of batch) pipe.callBuffer("HGETALL", workKey(p));
    const works = execReplies(await pipe.exec(), "work");
    const legacy: string[] = [];
    batch.forEach((p, i) => {
      const pairs = fieldsAndValues(works[i], workKey(p));
      for (let k = 0; k < pairs.length; k += 2) keep(p, pairs[k]!, pairs[k + 1]!, "work");
      if (pairs.length === 0) legacy.push(p);
    });
    if (legacy.length > 0) {
      const p2 = redis.pipeline();
      for (const p of legacy) p2.callBuffer("HGETALL", workKey(p, "workers"));
      const res = execReplies(await p2.exec(), "workers");
      legacy.forEach((p, i) => {
        const pairs = fieldsAndValues(res[i], workKey(p, "workers"));
        for (let k = 0; k < pairs.length; k += 2) keep(p, pairs[k]!, pairs[k + 1]!, "workers");
      });
    }
  };
  await Promise.all(chunks(procs, BATCH).map(readWork));
  const { page, rows } = pageOf(refs.sorted(), total, paging);
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
