// Ruby's `Sidekiq::ProcessSet`, `Sidekiq::Process` and `Sidekiq::WorkSet`:
// the live processes of the fleet (Ruby and Node alike), remote Quiet/Stop,
// and the jobs running right now.
//
//   cleanup   `ProcessSet.new` first prunes `processes` members whose hash has
//             no `info` (expired heartbeat): SSCAN, HEXISTS info each, SREM the
//             dead ones. From 6.5.2 only when `SET process_cleanup 1 NX EX 60`
//             succeeds (once a minute across the fleet); before, every time.
//   list      SSCAN processes, sorted; HMGET info concurrency busy beat quiet
//             rss rtt_us each; a member without info is skipped.
//   signal    MULTI{ LPUSH <identity>-signals SIG; EXPIRE <identity>-signals 60 };
//             quiet = TSTP, stop = TERM, dumpThreads = TTIN. Quiet and stop are
//             refused for embedded processes (7.0.3+).
//   work      HGETALL <identity>:work per process (and <identity>:workers,
//             what 6.0 – 6.4.1 write, when :work is empty), sorted by run_at.
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import { releaseRules } from "../wire/release-rules.js";
import { JobRecord } from "../wire/job-record.js";
import { parseJson, type JsonValue } from "../wire/json-scan.js";
import { byteCompare, sscanAll, toF, toI, type ApiContext } from "./context.js";
import { execReplies } from "../redis/replies.js";
import { PROCESS_CLEANUP_KEY, PROCESSES_KEY, signalsKey, workKey } from "../wire/keys.js";
import { displayClassOf, parseStored } from "./job-entry.js";
import { busyPage, type BusyPage } from "./busy-pages.js";

/** Whether a process in the fleet is Ruby Sidekiq or a sidekiq-bridge worker. */
export type Runtime = "ruby" | "node";

/** One live process, from its heartbeat (`Sidekiq::Process`). */
export interface ProcessInfo {
  identity: string;
  hostname: string | undefined;
  pid: number | undefined;
  tag: string | undefined;
  /** Epoch seconds. */
  startedAt: number | undefined;
  /** `info.version` (7.0.2+; a Node process writes e.g. `8.1.7-sidekiq-bridge.0.1.0`). */
  version: string | undefined;
  labels: string[];
  /** `Process#queues`: from `capsules` (8.0.9+) when present, else `info.queues`. */
  queues: string[];
  /** The `concurrency` hash field (8.1.2+ writers), else `info.concurrency`. */
  concurrency: number;
  busy: number;
  /** Last heartbeat, epoch seconds. */
  beat: number;
  /** `quiet == "true"`: quiet or shutting down (`Process#stopping?`). */
  quiet: boolean;
  /** KB. */
  rss: number;
  rttUs: number;
  /** "node" for sidekiq-bridge processes (the `sidekiq-bridge` label), else "ruby". */
  runtime: Runtime;
  /** `info.embedded` (7.0.3+): Quiet and Stop are refused. */
  embedded: boolean;
  /** The whole `info` object, as parsed. */
  info: { [key: string]: JsonValue };
}

/** A job a process is running now (`Sidekiq::WorkSet` entry). */
export interface RunningWork {
  /** The process identity. */
  process: string;
  /** Thread id (the hash field). */
  tid: string;
  queue: string | undefined;
  /** Epoch seconds (integer on the wire). */
  runAt: number;
  /** The job string as fetched (a 6.0.0–6.0.1 writer's object payload: its JSON text). */
  payload: string;
  record: JobRecord | null;
  jid: string | undefined;
  displayClass: string | undefined;
}

/** The remote signals Sidekiq's API sends a process: TSTP quiets, TERM stops, TTIN dumps its threads. */
export type RemoteSignalName = "TSTP" | "TERM" | "TTIN";

/** No live process has this identity. */
export class ProcessNotFoundError extends Error {
  override name = "ProcessNotFoundError";
}

/** The process is embedded in an application and does not take Stop (or Quiet) from outside, as in Sidekiq. */
export class EmbeddedProcessError extends Error {
  override name = "EmbeddedProcessError";
}

const FIELDS = ["info", "concurrency", "busy", "beat", "quiet", "rss", "rtt_us"] as const;
/** Processes checked per pipeline by `cleanup`. */
const CLEANUP_BATCH = 1000;

function obj(v: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) && typeof v !== "bigint" ? v : undefined;
}

function strings(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function num(v: JsonValue | undefined): number | undefined {
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;
}

/** Builds a ProcessInfo from the HMGET reply (info, concurrency, busy, beat, quiet, rss, rtt_us). */
export function processFromHash(identity: string, values: ReadonlyArray<string | null>): ProcessInfo | undefined {
  const [infoText, concurrency, busy, beat, quiet, rss, rtt] = values;
  if (infoText === null || infoText === undefined) return undefined;
  let parsed: JsonValue;
  try {
    parsed = parseJson(infoText);
  } catch {
    return undefined;
  }
  const info = obj(parsed);
  if (!info) return undefined;
  const labels = strings(info.labels);
  const capsules = obj(info.capsules);
  const queues = capsules
    ? [...new Set(Object.values(capsules).flatMap((c) => Object.keys(obj(obj(c)?.weights) ?? {})))]
    : strings(info.queues);
  const fieldConcurrency =
    concurrency !== null && concurrency !== undefined && concurrency !== "" ? toI(concurrency) : undefined;
  return {
    identity: typeof info.identity === "string" ? info.identity : identity,
    hostname: typeof info.hostname === "string" ? info.hostname : undefined,
    pid: num(info.pid),
    tag: typeof info.tag === "string" ? info.tag : undefined,
    startedAt: num(info.started_at),
    version: typeof info.version === "string" ? info.version : undefined,
    labels,
    queues,
    concurrency: fieldConcurrency ?? num(info.concurrency) ?? 0,
    busy: toI(busy),
    beat: toF(beat),
    quiet: quiet === "true",
    rss: toI(rss),
    rttUs: toI(rtt),
    runtime: labels.includes(BRIDGE_LABEL) ? "node" : "ruby",
    embedded: info.embedded === true,
    info,
  };
}

/** `Sidekiq::ProcessSet`: the live Ruby and Node processes, what they run, and their Quiet/Stop signals. */
export class ProcessSet {
  constructor(private readonly ctx: ApiContext) {}

  /**
   * `ProcessSet#cleanup`: SREMs members whose heartbeat hash has no `info`;
   * returns how many. Guarded by the `process_cleanup` lock (SET NX EX 60) as
   * from Sidekiq 6.5.2, unless the API follows an older release or `force`.
   */
  async cleanup(opts: { force?: boolean } = {}): Promise<number> {
    const { redis } = this.ctx;
    if (!opts.force && releaseRules(this.ctx.rules).api.processCleanupLock) {
      if ((await redis.set(PROCESS_CLEANUP_KEY, "1", "EX", 60, "NX")) === null) return 0;
    }
    const procs = await sscanAll(redis, PROCESSES_KEY);
    const prune: string[] = [];
    // EXISTS, not Ruby's HGET info: the same answer without reading every info text.
    for (let at = 0; at < procs.length; at += CLEANUP_BATCH) {
      const batch = procs.slice(at, at + CLEANUP_BATCH);
      const pipe = redis.pipeline();
      for (const p of batch) pipe.hexists(p, "info");
      const found = execReplies(await pipe.exec(), "process cleanup");
      batch.forEach((p, i) => {
        if (found[i] !== 1) prune.push(p);
      });
    }
    return prune.length === 0 ? 0 : redis.srem(PROCESSES_KEY, ...prune);
  }

  /**
   * One page of Busy and the fleet's totals (busy-pages.ts): `cleanup` first,
   * as `ProcessSet.new`, then the fleet read once in pipelined batches.
   */
  async page(opts: Parameters<typeof busyPage>[1]): Promise<BusyPage> {
    await this.cleanup();
    return busyPage(this.ctx, opts);
  }

  /** SCARD processes (not pruned). */
  size(): Promise<number> {
    return this.ctx.redis.scard(PROCESSES_KEY);
  }

  /** `ProcessSet.new.to_a`: cleanup (unless `cleanup: false`), then every live process, sorted by identity. */
  async list(opts: { cleanup?: boolean } = {}): Promise<ProcessInfo[]> {
    if (opts.cleanup !== false) await this.cleanup();
    const { redis } = this.ctx;
    const procs = (await sscanAll(redis, PROCESSES_KEY)).sort(byteCompare);
    if (procs.length === 0) return [];
    const pipe = redis.pipeline();
    for (const p of procs) pipe.hmget(p, ...FIELDS);
    const res = execReplies(await pipe.exec(), "processes");
    const out: ProcessInfo[] = [];
    procs.forEach((id, i) => {
      const p = processFromHash(id, res[i] as Array<string | null>);
      if (p) out.push(p);
    });
    return out;
  }

  /** `ProcessSet[identity]`: MULTI{SISMEMBER processes id; HMGET id …}; undefined unless both are there. */
  async get(identity: string): Promise<ProcessInfo | undefined> {
    const [member, values] = execReplies(
      await this.ctx.redis
        .multi()
        .sismember(PROCESSES_KEY, identity)
        .hmget(identity, ...FIELDS)
        .exec(),
      "process",
    ) as [number, Array<string | null>];
    if (member === 0) return undefined;
    return processFromHash(identity, values);
  }

  /** `Process#quiet!`: TSTP. */
  quiet(identity: string): Promise<ProcessInfo> {
    return this.signal(identity, "TSTP");
  }

  /** `Process#stop!`: TERM. */
  stop(identity: string): Promise<ProcessInfo> {
    return this.signal(identity, "TERM");
  }

  /** `Process#dump_threads`: TTIN (allowed for embedded processes, as in Ruby). */
  dumpThreads(identity: string): Promise<ProcessInfo> {
    return this.signal(identity, "TTIN");
  }

  /**
   * Sends a remote signal the way `Process#signal` does, to a live process
   * (one `ProcessSet[identity]` finds). Throws ProcessNotFoundError, or
   * EmbeddedProcessError for quiet/stop of an embedded process.
   */
  async signal(identity: string, sig: RemoteSignalName): Promise<ProcessInfo> {
    const p = await this.get(identity);
    if (!p)
      throw new ProcessNotFoundError(
        `no live Sidekiq process "${identity}" (not in the processes set, or its heartbeat expired)`,
      );
    if (p.embedded && sig !== "TTIN")
      throw new EmbeddedProcessError(`Can't ${sig === "TSTP" ? "quiet" : "stop"} an embedded process (${identity})`);
    const key = signalsKey(identity);
    execReplies(await this.ctx.redis.multi().lpush(key, sig).expire(key, 60).exec(), `signal ${identity}`);
    return p;
  }

  /** `WorkSet#each`: the running jobs of every process, oldest `run_at` first. */
  async work(): Promise<RunningWork[]> {
    const { redis } = this.ctx;
    const procs = (await sscanAll(redis, PROCESSES_KEY)).sort(byteCompare);
    if (procs.length === 0) return [];
    const pipe = redis.pipeline();
    for (const p of procs) pipe.hgetall(workKey(p));
    const works = execReplies(await pipe.exec(), "work") as Array<Record<string, string>>;
    const empty = procs.filter((_, i) => Object.keys(works[i] ?? {}).length === 0);
    const legacy = new Map<string, Record<string, string>>();
    if (empty.length > 0) {
      const p2 = redis.pipeline();
      for (const p of empty) p2.hgetall(workKey(p, "workers"));
      const res = execReplies(await p2.exec(), "workers") as Array<Record<string, string>>;
      empty.forEach((p, i) => legacy.set(p, res[i] ?? {}));
    }
    const out: RunningWork[] = [];
    procs.forEach((proc, i) => {
      const hash = Object.keys(works[i] ?? {}).length > 0 ? works[i]! : (legacy.get(proc) ?? {});
      for (const [tid, json] of Object.entries(hash)) {
        if (json === "") continue;
        const w = parseWork(proc, tid, json);
        if (w) out.push(w);
      }
    });
    return out.sort((a, b) => a.runAt - b.runAt);
  }
}

/** One work hash value `{"queue","payload","run_at"}`; the payload's bytes are kept. */
export function parseWork(process: string, tid: string, json: string): RunningWork | undefined {
  let rec: JobRecord;
  try {
    rec = JobRecord.parse(json);
  } catch {
    return undefined;
  }
  const payloadRaw = rec.raw("payload");
  let payload = "";
  if (payloadRaw !== undefined) {
    const v = parseJson(payloadRaw);
    payload = typeof v === "string" ? v : payloadRaw;
  }
  const record = parseStored(payload);
  const runAt = rec.get("run_at");
  return {
    process,
    tid,
    queue: rec.getString("queue"),
    runAt: typeof runAt === "number" ? runAt : typeof runAt === "bigint" ? Number(runAt) : 0,
    payload,
    record,
    jid: record?.getString("jid"),
    displayClass: displayClassOf(record),
  };
}
