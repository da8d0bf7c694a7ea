// Sidekiq's Manager for one capsule: its slots, the fetch loop each of its
// fetch lanes runs (the fetch path, from lanes to acknowledgements: fetch/,
// mapped in fetch/index.ts), and the hard part of shutdown (abort what is
// still running at the deadline and hand it back). Its running jobs are
// entries of the launcher's WorkState (work-state.ts), shared by its managers.
// The launcher owns one manager per capsule.
import type { Redis } from "ioredis";
import { bounded, type ConnectionWatch, isConnectionError } from "../redis/availability.js";
import type { Capsule } from "./capsule.js";
import {
  AckQueue,
  BasicFetch,
  defaultFetchLanes,
  FetchAhead,
  type Fetcher,
  FetchLanes,
  laneBatch,
  ReliableFetch,
  type ServerFeatures,
  Slots,
  spareLanes,
  type UnitOfWork,
} from "./fetch/index.js";
import type { Config } from "./config.js";
import type { Logger } from "../logging/logger.js";
import { type ProcessorDeps, type ProcessResult, processJob } from "./processor.js";
import type { Work, WorkState } from "./work-state.js";

export interface ManagerOptions {
  /** The worker's runtime, by reference: the connection, the identity, the fetch options, the events. */
  config: Config;
  capsule: Capsule;
  features: ServerFeatures;
  processor: ProcessorDeps;
  logger: Logger;
  /** The process's running jobs: this manager's are those of its capsule. */
  work: WorkState;
  /** Reports an outage of the fetch connections once, with the worker's others. */
  watch?: ConnectionWatch;
}

/** What a manager's stop could and could not do. */
export interface ManagerStopResult {
  pushedBack: number;
  /** Unfinished jobs whose push back failed or timed out (reliable fetch: still in the working list). */
  notPushedBack: number;
  problems: string[];
}

type State = "new" | "running" | "quiet" | "stopped";

export class Manager {
  private state: State = "new";
  private readonly lanes: FetchLanes;
  private readonly slots: Slots;
  private loops: Promise<void>[] = [];
  private jobDone?: () => void;
  /** Jobs fetched ahead, waiting for a slot. */
  private readonly ahead: FetchAhead;

  constructor(private readonly options: ManagerOptions) {
    this.lanes = new FetchLanes(options.logger);
    this.slots = new Slots(options.capsule.concurrency);
    this.ahead = new FetchAhead({
      running: () => this.state === "running",
      wake: () => this.lanes.wake(),
      logger: options.logger,
    });
  }

  get capsule(): Capsule {
    return this.options.capsule;
  }

  /** Opens the fetch lanes, registers the working lists and starts fetching. */
  async start(): Promise<void> {
    const cap = this.options.capsule;
    const { reliable, lanes: fetchLanes, ahead: fetchAhead } = this.options.config.options.fetch;
    const ahead = reliable && fetchAhead === true;
    const lanes = Math.max(
      1,
      Math.min(fetchLanes ?? defaultFetchLanes(cap.concurrency, reliable, ahead), cap.concurrency),
    );
    const perLane = laneBatch(cap.concurrency, lanes, ahead);
    // Each lane may have one batch waiting for slots.
    this.ahead.limit = ahead ? lanes * perLane : 0;
    const acks = new AckQueue();
    const redis = this.options.config.conn.redis;
    const basic = (blocking: Redis) => new BasicFetch(redis, blocking, cap, this.options.features);
    await this.lanes.open(lanes, redis, this.options.watch, async (blocking, lane) => {
      if (!reliable) return basic(blocking);
      const rf = new ReliableFetch(redis, blocking, cap, this.options.config.identity, this.options.features, acks);
      if (lane === 0) await rf.register();
      return rf;
    });
    this.state = "running";
    this.loops = this.lanes.fetchers.map((f) => this.fetchLoop(f, perLane));
    // A number of lanes set by hand is kept (one lane keeps strict order across batches).
    const spares = fetchLanes === undefined ? spareLanes(cap.concurrency, reliable, lanes) : 0;
    if (spares > 0)
      this.lanes.spareOnSlow(spares, redis, this.options.watch, basic, (f) => {
        if (this.state === "running") this.loops.push(this.fetchLoop(f, perLane, true));
      });
  }

  /**
   * Re-announces the working lists: a recovery that ran while our heartbeat
   * was missing (a long Redis outage) may have dropped them from the registry.
   * One lane does it for all, since the lanes share the lists.
   */
  async register(): Promise<void> {
    const first = this.lanes.fetchers[0];
    if (first instanceof ReliableFetch) await first.register();
  }

  /**
   * Stops fetching; running jobs go on (Sidekiq's quiet). Resolves once the
   * jobs fetched ahead are back in their queues (or Redis refused them).
   */
  quiet(): Promise<void> {
    if (this.state === "running") this.state = "quiet";
    // Jobs fetched ahead have not started: they go back to their queues now.
    const returned = this.ahead.quiet();
    // Fetch loops waiting for a slot end now, not when a job next finishes.
    this.lanes.wakeAll();
    return returned;
  }

  /**
   * Waits until `jobsDeadline` (epoch ms) for the fetch loops and the running
   * jobs; aborts the rest and pushes their raw jobs back to their queues, for
   * at most until `deadline`. A fetch stuck on an unreachable Redis is not
   * waited for past `jobsDeadline`: whatever it moved stays in the working
   * list, where recovery finds it.
   */
  async stop(jobsDeadline: number, deadline: number): Promise<ManagerStopResult> {
    const result: ManagerStopResult = { pushedBack: 0, notPushedBack: 0, problems: [] };
    await bounded(this.quiet(), jobsDeadline);
    let loopsDone = false;
    const loops = Promise.all(this.loops).then(() => {
      loopsDone = true;
      this.jobDone?.();
    });
    const cap = this.options.capsule;
    const work = this.options.work;
    while ((work.count(cap) > 0 || !loopsDone) && Date.now() < jobsDeadline) {
      await new Promise<void>((r) => {
        this.jobDone = r;
        setTimeout(r, Math.min(250, Math.max(0, jobsDeadline - Date.now())));
      });
    }
    void loops;
    // Jobs whose handler finished are only acknowledging: never requeue those.
    const unfinished = work.of(cap).filter((j) => !j.settled);
    for (const j of unfinished) j.abort.abort(new Error("sidekiq-bridge worker shutting down"));
    for (const f of new Set(unfinished.map((j) => j.fetcher))) {
      const uows = unfinished.filter((j) => j.fetcher === f).map((j) => j.uow);
      const r = await bounded(
        f.bulkRequeue(uows).then(
          () => true,
          () => false,
        ),
        deadline,
      );
      if (r === true) result.pushedBack += uows.length;
      else result.notPushedBack += uows.length;
    }
    for (const j of unfinished) work.finish(j);
    // Fetched ahead and not handed back (Redis unreachable): recovery returns them.
    result.notPushedBack += this.ahead.drop();
    // Finished jobs still writing their acknowledgement (or retry): a little longer.
    while (work.count(cap) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const left = work.count(cap);
    if (left > 0)
      result.problems.push(
        `${left} finished jobs were not acknowledged (${this.options.config.options.fetch.reliable ? "recovery runs them again" : "they are done"})`,
      );
    return result;
  }

  /** Deregisters the working lists and closes the fetch connections. */
  async close(): Promise<void> {
    if (this.state === "stopped") return;
    this.state = "stopped";
    await this.lanes.close();
  }

  /** Drops the fetch connections at once (a blocked fetch fails; no reconnect). */
  dropConnections(): void {
    this.state = "stopped";
    this.lanes.disconnect();
    this.lanes.wakeAll();
  }

  /**
   * One loop per fetch lane, each with its own blocking connection: fetch for
   * free slots (and, while fetching ahead, for a batch to wait for them), at
   * most `perLane` jobs a fetch; two lanes let one lane's round trip overlap
   * the other's jobs, and while fetching ahead, the other's round trip.
   */
  private async fetchLoop(fetch: Fetcher, perLane: number, spare = false): Promise<void> {
    const cap = this.options.capsule;
    const slots = this.slots;
    // Free slots, and room for jobs fetched ahead (a whole batch at a time:
    // a fetch for one job costs more Redis commands than a batch's share).
    const room = () => {
      const free = slots.free(this.ahead.length);
      const ahead = this.ahead.room();
      if (free > 0 || ahead === 0) return free;
      return free + ahead >= perLane ? free + ahead : 0;
    };
    while (this.state === "running") {
      if (spare && !this.lanes.slow) {
        await this.lanes.waitSpare();
        continue;
      }
      if (room() <= 0) {
        await this.lanes.wait();
        continue;
      }
      // Let the jobs that finish in this same tick (those just started too)
      // free their slots first, so one fetch fills them all: without this a
      // fast queue settles into fetching 9 jobs, then 1, then 9. A fetch
      // ahead goes at once instead: its round trip then overlaps the jobs
      // just started, which would otherwise all finish before it was sent.
      if (slots.free(this.ahead.length) > 0) {
        await new Promise<void>((r) => process.nextTick(r));
        if (this.state !== "running") break;
      }
      if (this.lanes.recoverNeeded) {
        await this.lanes.recover(() => this.held());
        continue;
      }
      if (slots.backingOff) {
        await slots.pause();
        if (this.state !== "running") break;
      }
      // Counted after any pause: the other lane may have taken slots meanwhile.
      const want = Math.min(room(), perLane);
      if (want <= 0) continue;
      let fetched: UnitOfWork[] | undefined;
      slots.reserve(want);
      this.lanes.begin(fetch);
      const sent = performance.now();
      try {
        // As many as there are free slots: each starts at once, none waits here.
        fetched = await fetch.retrieveWork(want);
        const seconds = (performance.now() - sent) / 1000;
        // A full batch of several came back without waiting for jobs: its time is the network's.
        if (want > 1 && fetched.length === want) this.lanes.noteRoundTrip(seconds * 1000);
        this.options.config.events.emit("fetch", { capsule: cap.name, seconds, jobs: fetched.length });
      } catch (e) {
        this.ahead.fetched(want, undefined);
        if (this.state === "running") {
          this.options.config.events.emit("fetch:error", { capsule: cap.name, error: e });
          this.lanes.recoverNeeded = true;
          // An outage is reported once, by the connection watch.
          if (!isConnectionError(e))
            this.options.logger.warn("fetch failed; retrying", { error: (e as Error).message });
        }
      } finally {
        slots.unreserve(want);
        this.lanes.end(fetch);
        this.lanes.wake();
      }
      if (fetched === undefined) {
        if (this.state !== "running") break;
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      this.ahead.fetched(want, fetched.length);
      if (fetched.length === 0) continue;
      if (this.state !== "running") {
        // Fetched after quiet was requested: hand them back, they run next.
        await fetch
          .bulkRequeue(fetched)
          .catch((e: Error) =>
            this.options.logger.error("could not requeue jobs fetched while quieting", { error: e.message }),
          );
        break;
      }
      for (const uow of fetched) {
        if (slots.open) this.run(uow, fetch);
        else this.ahead.wait(uow, fetch);
      }
    }
    this.lanes.wake();
  }

  /** The raw jobs (base64) this manager holds: running, or fetched ahead and waiting. */
  private held(): Set<string> {
    return new Set(
      [...this.options.work.of(this.options.capsule), ...this.ahead.waiting].map((j) => j.uow.raw.toString("base64")),
    );
  }

  /** Runs one fetched job in a slot, then its bookkeeping (ack, requeue or hand-back). */
  private run(uow: UnitOfWork, fetch: Fetcher): void {
    const job = this.options.work.start(uow, fetch, this.options.capsule);
    this.slots.take();
    void this.runJob(job);
  }

  /** The slot is free once the handler is done: the acknowledgement's round trip then overlaps the next fetch. */
  private release(job: Work): void {
    if (job.released) return;
    job.released = true;
    this.slots.release();
    const next = this.state === "running" ? this.ahead.next() : undefined;
    if (next) this.run(next.uow, next.fetcher);
    this.lanes.wake();
  }

  // One async function per job (not a chain of then/catch/finally): a busy
  // worker runs thousands a second, and each promise and closure is garbage.
  private async runJob(job: Work): Promise<void> {
    const { uow, fetcher: fetch } = job;
    const slots = this.slots;
    try {
      let result: ProcessResult;
      const started = performance.now();
      try {
        result = await processJob(job, this.options.processor);
        this.ahead.timed(performance.now() - started);
      } catch (e) {
        // E.g. Redis down while burying a malformed job: try the job again later.
        this.options.logger.error("could not process a job; it goes back to its queue", {
          error: (e as Error).message,
        });
        result = "requeue";
      }
      // After a hard shutdown's abort, stop() has requeued it already.
      if (job.abort.aborted) return;
      job.settled = true;
      if (result === "hand-back") {
        slots.handedBack();
        await fetch.handBack(uow);
        return;
      }
      slots.ran();
      this.release(job);
      // Bookkeeping survives a Redis outage: retry for up to a minute, backing off.
      const deadline = Date.now() + 60_000;
      for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
        try {
          if (result === "requeue") await fetch.bulkRequeue([uow]);
          else await fetch.acknowledge(uow);
          break;
        } catch (e) {
          if (Date.now() > deadline || this.state === "stopped") throw e;
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    } catch (e) {
      // With reliable fetch the job stays in the working list and is recovered later.
      this.options.logger.error("could not finish a job's bookkeeping", { error: (e as Error).message });
    } finally {
      if (!job.abort.aborted) this.options.work.finish(job);
      this.release(job);
      this.jobDone?.();
    }
  }
}
