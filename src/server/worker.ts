// The worker: Sidekiq's Launcher, Manager and Processors for Node. It fetches
// from its capsules' queues, runs registered handlers, retries failures the
// Sidekiq way, promotes scheduled and retry jobs, and heartbeats so the Ruby
// Web UI and API see it as one more Sidekiq process.
import type { Redis } from "ioredis";
import { Client } from "../client/client.js";
import { connectRedis, type OwnedRedis, type RedisSource } from "../redis/connection.js";
import { BRIDGE_LABEL } from "../client/fleet.js";
import type { DialectLike, WireProfile } from "../wire/dialect.js";
import type { JsonValue } from "../wire/json-scan.js";
import { makeCapsule, type Capsule, type CapsuleConfig } from "./capsule.js";
import { AckQueue, BasicFetch, ReliableFetch, type Fetcher, type UnitOfWork } from "./fetch.js";
import { Heartbeat, newIdentity, type WorkEntry } from "./heartbeat.js";
import { identityHost, recoverOrphans } from "./recovery.js";
import { detectFeatures } from "./server-features.js";
import { LazyAbort } from "./lazy-abort.js";
import type { RetryConfig } from "./job-retry.js";
import { consoleLogger, type Logger } from "./logger.js";
import {
  processJob,
  type ProcessorDeps,
  type ProcessResult,
  type ServerMiddleware,
  type UnknownClassPolicy,
} from "./processor.js";
import { Poller } from "./scheduled.js";
import { CronPoller, type CronPollerOptions } from "../cron/poller.js";
import { Stats } from "./stats.js";
import type { DeathHandler, HandlerOptions, JobHandler, RegisteredHandler } from "./types.js";

export interface WorkerOptions {
  redis: RedisSource;
  /** 6, 7, 8, an exact version, or "auto" (default): the oldest live Ruby process's. */
  dialect?: DialectLike | "auto";
  autoFallback?: DialectLike;
  /** The default capsule: queues (with optional weights, "critical,2") and concurrency. */
  queues?: Array<string | [string, number]>;
  concurrency?: number;
  /** More capsules, each with its own queues and concurrency. */
  capsules?: CapsuleConfig[];
  tag?: string;
  labels?: string[];
  /** Seconds to wait for running jobs at shutdown before aborting them (Sidekiq's -t, 25). */
  timeout?: number;
  unknownClass?: UnknownClassPolicy;
  /**
   * "reliable" (default): each fetched job waits in a working list of this
   * process until done, and a crashed process's jobs are recovered.
   * "basic": Sidekiq's BRPOP (a crash loses the jobs it was running).
   */
  fetch?: "reliable" | "basic";
  /**
   * Fetch connections per capsule (default 2 from concurrency 4, else 1): each
   * fetches for at most its share of the slots, so one's round trip overlaps
   * the other's jobs.
   */
  fetchLanes?: number;
  /** How often (ms) to look for dead processes' working lists (default 60 s). */
  recoveryIntervalMs?: number;
  /** Run the scheduled/retry poller (default true). */
  scheduler?: boolean;
  pollIntervalAverage?: number;
  averageScheduledPollInterval?: number;
  maxRetries?: number;
  deadTimeoutSeconds?: number;
  deadMaxJobs?: number;
  /**
   * sidekiq-cron's poller: on by default (it idles while Redis holds no cron
   * jobs), `false` to turn it off, or its options (poll interval, namespaces...).
   */
  cron?: boolean | Omit<CronPollerOptions, "redis" | "client" | "logger">;
  /** Embedded processes hide Quiet/Stop in the Web UI and ignore remote signals' kill (default false). */
  embedded?: boolean;
  logger?: Logger;
}

interface InFlight {
  uow: UnitOfWork;
  fetcher: Fetcher;
  abort: LazyAbort;
  startedAt: number;
  /** The handler has finished; only bookkeeping (ack, retry write) remains. */
  settled?: boolean;
  className?: string;
}

/**
 * A capsule's slots, shared by its fetch lanes: how many run, how many a
 * lane's fetch in flight has reserved, who waits for one, the hand-back
 * backoff, and the reclaim after a lost fetch reply (done when no lane of the
 * capsule has a fetch in flight, since the lanes share working lists).
 */
interface Slots {
  busy: number;
  reserved: number;
  waiters: Array<() => void>;
  backoffMs: number;
  fetching: number;
  reclaimNeeded: boolean;
  reclaiming?: Promise<void>;
}

type State = "new" | "running" | "quiet" | "stopping" | "stopped";

export class Worker {
  readonly identity = newIdentity();
  private state: State = "new";
  private readonly conn: OwnedRedis;
  private readonly blocking: Redis[] = [];
  private readonly capsules: Capsule[];
  private readonly handlers = new Map<string, RegisteredHandler>();
  private readonly activeJobHandlers = new Map<string, RegisteredHandler>();
  private readonly middleware: ServerMiddleware[] = [];
  private readonly deathHandlers: DeathHandler[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  private readonly work = new Map<string, WorkEntry>();
  private readonly stats = new Stats();
  private readonly logger: Logger;
  private readonly client: Client;
  private profile?: WireProfile;
  private heartbeat?: Heartbeat;
  private poller?: Poller;
  private cron?: CronPoller;
  private loops: Promise<void>[] = [];
  private tidSeq = 0;
  private stopped?: Promise<void>;
  /** One fetcher per capsule: its lanes share the working lists, so one registers and deregisters them. */
  private readonly firstLanes: Fetcher[] = [];
  private readonly slots: Slots[] = [];
  private recoveryTimer?: NodeJS.Timeout;

  constructor(private readonly options: WorkerOptions) {
    this.conn = connectRedis(options.redis);
    this.logger = options.logger ?? consoleLogger();
    const configs = options.capsules?.length
      ? options.capsules
      : [{ name: "default", concurrency: options.concurrency ?? 5, queues: options.queues ?? ["default"] }];
    this.capsules = configs.map(makeCapsule);
    this.client = new Client({
      redis: this.conn.redis,
      ...(options.dialect !== undefined ? { dialect: options.dialect } : {}),
      ...(options.autoFallback !== undefined ? { autoFallback: options.autoFallback } : {}),
      // Payloads the poller moves were checked when they were written.
      validate: false,
    });
  }

  /** Handles jobs of a Ruby class name: `handler(args, ctx)`. */
  register<A extends unknown[] = JsonValue[]>(
    className: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.handlers.set(className, { handler: handler as JobHandler<never>, options });
    return this;
  }

  /** Handles ActiveJob jobs of this class (routed by `wrapped`), with arguments decoded. */
  registerActiveJob<A extends unknown[] = unknown[]>(
    jobClass: string,
    handler: JobHandler<A>,
    options: HandlerOptions = {},
  ): this {
    this.activeJobHandlers.set(jobClass, { handler: handler as JobHandler<never>, options });
    return this;
  }

  use(mw: ServerMiddleware): this {
    this.middleware.push(mw);
    return this;
  }

  onDeath(handler: DeathHandler): this {
    this.deathHandlers.push(handler);
    return this;
  }

  get quiet(): boolean {
    return this.state !== "running";
  }

  private retryConfig(): RetryConfig {
    return {
      profile: this.profile!,
      maxRetries: this.options.maxRetries ?? 25,
      deadTimeoutSeconds: this.options.deadTimeoutSeconds ?? 180 * 24 * 3600,
      deadMaxJobs: this.options.deadMaxJobs ?? 10_000,
      deathHandlers: this.deathHandlers,
    };
  }

  async start(): Promise<void> {
    if (this.state !== "new") throw new Error(`worker already ${this.state}`);
    this.profile = await this.client.profile();
    this.state = "running";
    const retry = this.retryConfig();
    this.heartbeat = new Heartbeat({
      redis: this.conn.redis,
      profile: this.profile,
      identity: this.identity,
      tag: this.options.tag ?? "",
      labels: [...(this.options.labels ?? []), BRIDGE_LABEL],
      capsules: this.capsules.map((c) => ({
        name: c.name,
        concurrency: c.concurrency,
        mode: c.mode,
        weights: c.weights,
      })),
      embedded: this.options.embedded ?? false,
      work: () => this.work.values(),
      stats: this.stats,
      quiet: () => this.quiet,
      onSignal: (sig) => this.onRemoteSignal(sig),
      logger: { error: (m) => this.logger.error(m), warn: (m) => this.logger.warn(m) },
    });
    await this.heartbeat.start(); // the first beat, then one every beatSeconds
    if (this.options.scheduler !== false) {
      this.poller = new Poller({
        redis: this.conn.redis,
        identity: this.identity,
        client: this.client,
        profile: () => this.profile!,
        retry: () => retry,
        logger: this.logger,
        ...(this.options.pollIntervalAverage !== undefined
          ? { pollIntervalAverage: this.options.pollIntervalAverage }
          : {}),
        ...(this.options.averageScheduledPollInterval !== undefined
          ? { averageScheduledPollInterval: this.options.averageScheduledPollInterval }
          : {}),
      });
      this.poller.start();
    }
    if (this.options.cron !== false) {
      const opts = typeof this.options.cron === "object" ? this.options.cron : {};
      const isActiveJob = (c: string) => this.activeJobHandlers.has(c);
      this.cron = new CronPoller({
        isActiveJob,
        ...opts,
        redis: this.conn.redis,
        client: this.client,
        logger: this.logger,
      });
      this.cron.start();
    }
    const reliable = (this.options.fetch ?? "reliable") === "reliable";
    const features = await detectFeatures(this.conn.redis);
    if (reliable) {
      // Our heartbeat exists now, so nobody mistakes our working lists for orphans.
      await this.recover(true);
      this.recoveryTimer = setInterval(() => void this.recover(false), this.options.recoveryIntervalMs ?? 60_000);
      this.recoveryTimer.unref();
    }
    for (const cap of this.capsules) {
      const slots: Slots = { busy: 0, reserved: 0, waiters: [], backoffMs: 0, fetching: 0, reclaimNeeded: false };
      this.slots.push(slots);
      const lanes = Math.max(1, Math.min(this.options.fetchLanes ?? (cap.concurrency >= 4 ? 2 : 1), cap.concurrency));
      const perLane = Math.ceil(cap.concurrency / lanes);
      const fetchers: Fetcher[] = [];
      const acks = new AckQueue();
      for (let lane = 0; lane < lanes; lane++) {
        // A fetch must never be sent twice: if a connection drops with a fetch in
        // flight, Redis may have moved a job already. Fail it, and reclaim instead.
        const blocking = this.conn.redis.duplicate({ autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
        blocking.on("error", () => {}); // reported by the fetch loop
        this.blocking.push(blocking);
        let fetcher: Fetcher;
        if (reliable) {
          const rf = new ReliableFetch(this.conn.redis, blocking, cap, this.identity, features, acks);
          if (lane === 0) await rf.register();
          fetcher = rf;
        } else fetcher = new BasicFetch(this.conn.redis, blocking, cap, features);
        fetchers.push(fetcher);
      }
      this.firstLanes.push(fetchers[0]!);
      for (const fetcher of fetchers) this.loops.push(this.fetchLoop(cap, fetcher, fetchers, slots, perLane, retry));
    }
    this.logger.info(`sidekiq-bridge worker ${this.identity} started`, {
      dialect: this.profile.version,
      capsules: this.capsules.map((c) => ({
        name: c.name,
        concurrency: c.concurrency,
        queues: Object.keys(c.weights),
      })),
    });
  }

  /** Runs a Redis write until it succeeds (backing off), for at most `ms`. */
  private async persist(op: () => Promise<void>, ms = 60_000): Promise<void> {
    const deadline = Date.now() + ms;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2000)) {
      try {
        return await op();
      } catch (e) {
        if (Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private async recover(force: boolean): Promise<void> {
    try {
      // Re-announce our working lists: a recovery that ran while our heartbeat was
      // missing (a long Redis outage) may have dropped them from the registry.
      for (const f of this.firstLanes) if (f instanceof ReliableFetch) await f.register();
      await recoverOrphans(this.conn.redis, identityHost(this.identity), this.logger, force);
    } catch (e) {
      this.logger.warn("could not recover orphaned jobs", { error: (e as Error).message });
    }
  }

  /**
   * One loop per fetch lane (a capsule has one, or two from concurrency 4, each
   * with its own blocking connection): fetch only for free slots, so no job
   * waits in this process; two lanes let one lane's round trip overlap the
   * other's jobs.
   */
  private async fetchLoop(
    cap: Capsule,
    fetch: Fetcher,
    lanes: readonly Fetcher[],
    slots: Slots,
    perLane: number,
    retry: RetryConfig,
  ): Promise<void> {
    const deps: ProcessorDeps = {
      redis: this.conn.redis,
      handlers: this.handlers,
      activeJobHandlers: this.activeJobHandlers,
      middleware: this.middleware,
      retry,
      stats: this.stats,
      unknownClass: this.options.unknownClass ?? "retry",
      logger: this.logger,
      work: this.work,
    };
    while (this.state === "running") {
      if (slots.busy + slots.reserved >= cap.concurrency) {
        await this.waitForLanes(slots);
        continue;
      }
      // Let the jobs that finish in this same tick (those just started too)
      // free their slots first, so one fetch fills them all: without this a
      // fast queue settles into fetching 9 jobs, then 1, then 9.
      await new Promise<void>((r) => process.nextTick(r));
      if (this.state !== "running") break;
      if (slots.reclaimNeeded) {
        await this.reclaimLanes(lanes, slots);
        continue;
      }
      if (slots.backoffMs > 0) {
        await new Promise((r) => setTimeout(r, slots.backoffMs));
        if (this.state !== "running") break;
      }
      // Counted after any pause: the other lane may have taken slots meanwhile.
      const want = Math.min(cap.concurrency - slots.busy - slots.reserved, perLane);
      if (want <= 0) continue;
      let fetched: UnitOfWork[] | undefined;
      slots.reserved += want;
      slots.fetching++;
      try {
        // As many as there are free slots: each starts at once, none waits here.
        fetched = await fetch.retrieveWork(want);
      } catch (e) {
        if (this.state === "running") {
          slots.reclaimNeeded = true;
          this.logger.warn("fetch failed; retrying", { error: (e as Error).message });
        }
      } finally {
        slots.reserved -= want;
        slots.fetching--;
        this.wakeLanes(slots);
      }
      if (fetched === undefined) {
        if (this.state !== "running") break;
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (fetched.length === 0) continue;
      if (this.state !== "running") {
        // Fetched after quiet was requested: hand them back, they run next.
        await fetch
          .requeue(fetched)
          .catch((e: Error) =>
            this.logger.error("could not requeue jobs fetched while quieting", { error: e.message }),
          );
        break;
      }
      for (const uow of fetched) this.run(uow, fetch, deps, slots);
    }
    this.wakeLanes(slots);
  }

  /** Until a slot frees, a lane's fetch ends, or quiet (wakeLanes). */
  private waitForLanes(slots: Slots): Promise<void> {
    return new Promise<void>((r) => slots.waiters.push(r));
  }

  private wakeLanes(slots: Slots): void {
    for (const w of slots.waiters.splice(0)) w();
  }

  /**
   * After a lost fetch reply: jobs a fetch moved into our working lists whose
   * reply never came go back to their queues. Run once no lane has a fetch in
   * flight (a lane's pending move must not be taken for a stray).
   */
  private async reclaimLanes(lanes: readonly Fetcher[], slots: Slots): Promise<void> {
    if (slots.reclaiming) return slots.reclaiming;
    if (slots.fetching > 0) {
      await this.waitForLanes(slots);
      return;
    }
    slots.reclaiming = (async () => {
      try {
        const running = new Set(
          [...this.inFlight.values()].filter((j) => lanes.includes(j.fetcher)).map((j) => j.uow.raw.toString("base64")),
        );
        const n = (await lanes[0]!.reclaim?.(running)) ?? 0;
        if (n > 0) this.logger.warn(`Reclaimed ${n} jobs whose fetch reply was lost`);
        slots.reclaimNeeded = false;
      } catch (e) {
        this.logger.warn("could not reclaim jobs after a lost fetch; retrying", { error: (e as Error).message });
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        slots.reclaiming = undefined;
        this.wakeLanes(slots);
      }
    })();
    return slots.reclaiming;
  }

  /** Runs one fetched job in a slot, then its bookkeeping (ack, requeue or hand-back). */
  private run(uow: UnitOfWork, fetch: Fetcher, deps: ProcessorDeps, slots: Slots): void {
    const tid = (++this.tidSeq).toString(36);
    const job: InFlight = { uow, fetcher: fetch, abort: new LazyAbort(), startedAt: Date.now() };
    this.inFlight.set(tid, job);
    slots.busy++;
    let released = false;
    // The slot is free once the handler is done: the acknowledgement's round
    // trip then overlaps the next fetch instead of preceding it.
    const release = () => {
      if (released) return;
      released = true;
      slots.busy--;
      this.wakeLanes(slots);
    };
    void processJob(uow, tid, job.abort, deps)
      .catch((e: Error): ProcessResult => {
        // E.g. Redis down while burying a malformed job: try the job again later.
        this.logger.error("could not process a job; it goes back to its queue", { error: e.message });
        return "requeue";
      })
      .then(async (result) => {
        // After a hard shutdown's abort, shutdown() has requeued it already.
        if (job.abort.aborted) return;
        job.settled = true;
        if (result === "hand-back") {
          slots.backoffMs = Math.min(Math.max(slots.backoffMs * 2, 100), 5000);
          await fetch.handBack(uow);
        } else {
          slots.backoffMs = 0;
          release();
          // Bookkeeping survives a Redis outage: retry for up to a minute.
          await this.persist(() => (result === "requeue" ? fetch.requeue([uow]) : fetch.acknowledge(uow)));
        }
      })
      .catch((e: Error) => {
        // With reliable fetch the job stays in the working list and is recovered later.
        this.logger.error("could not finish a job's bookkeeping", { error: e.message });
      })
      .finally(() => {
        if (!job.abort.aborted) this.inFlight.delete(tid);
        release();
        this.jobDone?.();
      });
  }

  private jobDone?: () => void;

  /** Stop fetching new work and stop the poller; running jobs continue (Sidekiq's TSTP). */
  async quietDown(): Promise<void> {
    if (this.state !== "running") return;
    this.state = "quiet";
    // Fetch loops waiting for a slot end now, not when a job next finishes.
    for (const sl of this.slots) this.wakeLanes(sl);
    this.logger.info("Terminating quiet threads");
    await this.poller?.stop();
    await this.cron?.stop();
    await this.heartbeat?.beat().catch(() => undefined);
  }

  /**
   * Sidekiq's shutdown: quiet, wait up to `timeout` for running jobs, abort
   * the rest and push their raw jobs back to their queues, clear the heartbeat.
   */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    if (this.state === "new") {
      this.state = "stopped";
      await this.closeConnections();
      return;
    }
    await this.quietDown();
    this.state = "stopping";
    await Promise.all(this.loops);
    const deadline = Date.now() + (this.options.timeout ?? 25) * 1000;
    while (this.inFlight.size > 0 && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.jobDone = r;
        setTimeout(r, 250);
      });
    }
    // Jobs whose handler finished are only acknowledging: never requeue those.
    const unfinished = [...this.inFlight.values()].filter((j) => !j.settled);
    if (unfinished.length > 0) {
      for (const j of unfinished) j.abort.abort(new Error("sidekiq-bridge worker shutting down"));
      for (const f of new Set(unfinished.map((j) => j.fetcher))) {
        await f.requeue(unfinished.filter((j) => j.fetcher === f).map((j) => j.uow));
      }
      this.logger.info(`Pushed ${unfinished.length} jobs back to Redis`);
      for (const [tid, j] of this.inFlight) if (!j.settled) this.inFlight.delete(tid);
    }
    for (let i = 0; i < 20 && this.inFlight.size > 0; i++) await new Promise((r) => setTimeout(r, 250));
    if (this.recoveryTimer) clearInterval(this.recoveryTimer);
    for (const f of this.firstLanes) await f.close().catch(() => undefined);
    await this.heartbeat?.stop();
    await this.heartbeat
      ?.clear()
      .catch((e: Error) => this.logger.warn("could not clear the heartbeat", { error: e.message }));
    this.state = "stopped";
    await this.closeConnections();
    this.logger.info("Bye!");
  }

  private async closeConnections(): Promise<void> {
    for (const b of this.blocking) b.disconnect();
    await this.client.close();
    if (this.conn.owned) await this.conn.redis.quit().catch(() => undefined);
  }

  /** What each slot is doing (Sidekiq's TTIN dump). */
  dump(): Array<{ tid: string; queue: string; jid?: string; runningFor: number }> {
    return [...this.inFlight.entries()].map(([tid, j]) => ({
      tid,
      queue: j.uow.queueName,
      jid: /"jid":"([0-9a-f]+)"/.exec(j.uow.job ?? "")?.[1],
      runningFor: (Date.now() - j.startedAt) / 1000,
    }));
  }

  private onRemoteSignal(sig: "TSTP" | "TERM" | "TTIN"): void {
    this.logger.info(`Got ${sig} signal`);
    if (sig === "TSTP") void this.quietDown();
    else if (sig === "TERM") void this.stop();
    else this.logger.warn("Thread dump", { slots: this.dump() });
  }

  /** OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump. */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    const handlers: Array<[NodeJS.Signals, () => void]> = [
      ["SIGTERM", () => void this.stop().then(() => exit(0))],
      ["SIGINT", () => void this.stop().then(() => exit(0))],
      ["SIGTSTP", () => void this.quietDown()],
      ["SIGTTIN", () => this.logger.warn("Thread dump", { slots: this.dump() })],
    ];
    for (const [s, h] of handlers) process.on(s, h);
    return () => {
      for (const [s, h] of handlers) process.off(s, h);
    };
  }
}
