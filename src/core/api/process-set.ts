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
import { releaseRules } from "../wire/release-rules.js";
import { byteCompare, sscanAll, type ApiContext } from "./context.js";
import { execReplies } from "../redis/replies.js";
import { PROCESS_CLEANUP_KEY, PROCESSES_KEY, signalsKey, workKey } from "../wire/keys.js";
import { busyPage, type BusyPage } from "./busy-pages.js";
import {
  CLEANUP_BATCH,
  EmbeddedProcessError,
  FIELDS,
  parseWork,
  ProcessNotFoundError,
  processFromHash,
  type ProcessInfo,
  type RemoteSignalName,
  type RunningWork,
} from "./process-hash.js";

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
