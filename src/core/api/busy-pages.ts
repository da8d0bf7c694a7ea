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
//              6.4.1 write, when :work is empty), as bytes; each entry is
//              offered to the page (busy-work.ts), which keeps the `count`
//              oldest run_at from `offset` (WorkSet#each's order) and then
//              reads each row's job again.
import type { Redis } from "ioredis";
import { execReplies } from "../redis/replies.js";
import { PROCESSES_KEY, workKey } from "../wire/keys.js";
import { releaseRules } from "../wire/release-rules.js";
import { byteCompare, sscanAll, toI, type ApiContext } from "./context.js";
import { keptFor, pageOf, textCompare, WorkPage, type BusyFilter, type BusyPaging } from "./busy-work.js";
import { processFromHash, type ProcessInfo, type RunningWork } from "./process-hash.js";
import { Smallest } from "./smallest.js";

export type { BusyFilter, BusyPaging } from "./busy-work.js";

/**
 * Processes read per pipeline. A pipeline's replies all stay alive until its
 * last one arrives, and each young-generation collection copies what is alive:
 * 500 processes' work hashes (1.5 MB of text) made collections cost more than
 * reading them. Small pipelines, all in flight together, cost no round trip more.
 */
const BATCH = 50;
const FIELDS = ["info", "concurrency", "busy", "beat", "quiet", "rss", "rtt_us"] as const;

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

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

interface ProcessRow {
  id: string;
  values: Array<string | null>;
  p?: ProcessInfo;
  /** The hostname in natural order's parts (empty once some process has no hostname). */
  key: Array<string | number>;
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
  if (opts.jobs) {
    const work = new WorkPage(filter, opts.jobs);
    await Promise.all(chunks(jobHosts, BATCH).map((batch) => readWork(redis, work, batch)));
    out.jobs = await work.finish(redis);
  }
  return out;
}

/** The work hashes of `batch` (and `:workers` where `:work` is empty), offered to the page. */
async function readWork(redis: Redis, work: WorkPage, batch: string[]): Promise<void> {
  const pipe = redis.pipeline();
  for (const p of batch) pipe.callBuffer("HGETALL", workKey(p));
  const res = execReplies(await pipe.exec(), "work");
  await work.addLegacy(
    redis,
    batch.filter((p, i) => !work.addHash(p, res[i], "work")),
  );
}
