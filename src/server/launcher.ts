// Sidekiq's Launcher: starts and stops everything a worker process runs
// beside its managers (one per capsule): the heartbeat, the scheduled poller,
// the recovery of dead processes' working lists, and the OS and remote
// signals. Quiet stops fetching and polling; stop waits, hands back, clears.
import { constants as osConstants } from "node:os";
import type { Client } from "../client/client.js";
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import {
  bounded,
  closeConnection,
  ConnectionWatch,
  isConnectionError,
  lastErrorOf,
  reasonOf,
  TIMED_OUT,
  whenReady,
} from "../redis/availability.js";
import type { OwnedRedis } from "../redis/connection.js";
import type { WireProfile } from "../wire/dialect.js";
import type { Capsule } from "./capsule.js";
import { Heartbeat, type RemoteSignal, type WorkEntry } from "./heartbeat.js";
import type { RetryConfig } from "./job-retry.js";
import type { WorkerEvents } from "./events.js";
import type { JobLogger } from "./job-logger.js";
import type { Logger } from "./logger.js";
import { Manager } from "./manager.js";
import type { ServerMiddleware, UnknownClassPolicy } from "./processor.js";
import { identityHost, recoverOrphans } from "./recovery.js";
import { CronPoller, type CronPollerOptions } from "../cron/poller.js";
import { Poller } from "./scheduled.js";
import { detectFeatures } from "./server-features.js";
import { Stats } from "./execution-stats.js";
import type { DeathHandler, RegisteredHandler } from "./types.js";

/** What the user registered on the worker: handlers, middleware, death handlers. */
export interface Registry {
  handlers: ReadonlyMap<string, RegisteredHandler>;
  activeJobHandlers: ReadonlyMap<string, RegisteredHandler>;
  middleware: readonly ServerMiddleware[];
  deathHandlers: DeathHandler[];
}

/** The worker's settings the launcher needs, resolved. */
export interface LauncherOptions {
  conn: OwnedRedis;
  client: Client;
  identity: string;
  capsules: Capsule[];
  registry: Registry;
  logger: Logger;
  /** Builds the retry rules once the fleet's release is known. */
  retryConfig: (profile: WireProfile) => RetryConfig;
  reliable: boolean;
  fetchLanes?: number | undefined;
  /** Reliable fetch only: fetch the next batch while short jobs still hold the slots. */
  fetchAhead: boolean;
  recoveryIntervalMs: number;
  scheduler: boolean;
  /** sidekiq-cron's poller options, or false for none. */
  cron: false | Omit<CronPollerOptions, "redis" | "client" | "logger">;
  pollIntervalAverage?: number | undefined;
  averageScheduledPollInterval?: number | undefined;
  unknownClass: UnknownClassPolicy;
  /** Seconds to wait for running jobs at shutdown. */
  timeout: number;
  tag: string;
  labels: string[];
  embedded: boolean;
  /** How long start() waits for an unreachable Redis before it rejects. */
  connectWaitMs: number;
  /** Job lines, events and error handlers; lifecycle events. */
  jobLogger?: JobLogger;
  events?: WorkerEvents;
}

/**
 * After the jobs' timeout, the time left for Redis work at shutdown (pushing
 * jobs back, leaving the working-list registry, clearing the heartbeat,
 * closing): past it, the connections are dropped and what was not done is
 * reported. Quiet (TSTP) waits at most this long for Redis too.
 */
export const SHUTDOWN_GRACE_MS = 3000;

/** How a stop went. `clean` is false when something could not be done (Redis unreachable). */
export interface StopResult {
  clean: boolean;
  /** Jobs still running at the timeout, pushed back to their queues. */
  pushedBack: number;
  /**
   * Jobs still running at the timeout that could not be pushed back: with
   * reliable fetch they wait in this process's working lists, and recovery
   * runs them again once the heartbeat has expired; with basic fetch they are lost.
   */
  notPushedBack: number;
  /** What could not be done, one phrase each (empty when clean). */
  problems: string[];
}

/** Exit codes of a stopped worker process: everything done. */
export const EXIT_STOPPED = 0;
/** Stopped within its deadline, but something could not be done (Redis unreachable): see the log line. */
export const EXIT_INCOMPLETE = 3;

type State = "new" | "running" | "quiet" | "stopping" | "stopped";

export class Launcher {
  private state: State = "new";
  private readonly work = new Map<string, WorkEntry>();
  private readonly stats = new Stats();
  private readonly managers: Manager[] = [];
  private heartbeat?: Heartbeat;
  /** The fleet's release, known once running. */
  profile?: WireProfile;
  private poller?: Poller;
  private cron?: CronPoller;
  private recoveryTimer?: NodeJS.Timeout;
  private stopped?: Promise<StopResult>;
  private tidSeq = 0;
  private readonly watch: ConnectionWatch;
  /** Set once shutdown gave up on Redis: late failures of abandoned calls are not logged. */
  private gaveUp = false;
  /** The logger handed to the heartbeat, poller and managers: silent once shutdown gave up. */
  private readonly log: Logger;
  private signalsHandled = false;

  constructor(private readonly o: LauncherOptions) {
    const quietAfterGivingUp =
      (f: (m: string, c?: Record<string, unknown>) => void) => (m: string, c?: Record<string, unknown>) => {
        if (!this.gaveUp) f(m, c);
      };
    this.log = {
      debug: quietAfterGivingUp((m, c) => o.logger.debug(m, c)),
      info: quietAfterGivingUp((m, c) => o.logger.info(m, c)),
      warn: quietAfterGivingUp((m, c) => o.logger.warn(m, c)),
      error: quietAfterGivingUp((m, c) => o.logger.error(m, c)),
    };
    // One line when Redis goes away, one when it is back (not one per retry).
    this.watch = new ConnectionWatch({ lost: (m) => this.log.warn(m), back: (m) => this.log.info(m) });
    if (o.conn.owned) this.watch.add(o.conn.redis);
  }

  get quiet(): boolean {
    return this.state !== "running";
  }

  get started(): boolean {
    return this.state !== "new";
  }

  async run(): Promise<void> {
    if (this.state !== "new") throw new Error(`worker already ${this.state}`);
    const o = this.o;
    try {
      // Fail fast, with the reason, when Redis is not there at all.
      await whenReady(o.conn.redis, o.connectWaitMs);
    } catch (e) {
      this.state = "stopped";
      this.dropConnections();
      throw e;
    }
    const profile = await o.client.profile();
    this.profile = profile;
    this.state = "running";
    const retry = o.retryConfig(profile);
    this.heartbeat = new Heartbeat({
      redis: o.conn.redis,
      profile,
      identity: o.identity,
      tag: o.tag,
      labels: [...o.labels, BRIDGE_LABEL],
      capsules: o.capsules.map((c) => ({
        name: c.name,
        concurrency: c.concurrency,
        mode: c.mode,
        weights: c.weights,
      })),
      embedded: o.embedded,
      work: () => this.work.values(),
      stats: this.stats,
      quiet: () => this.quiet,
      onSignal: (sig) => this.onRemoteSignal(sig),
      logger: { error: (m) => this.log.error(m), warn: (m) => this.log.warn(m) },
    });
    await this.heartbeat.start(); // the first beat, then one every beatSeconds
    if (o.scheduler) {
      this.poller = new Poller({
        redis: o.conn.redis,
        identity: o.identity,
        client: o.client,
        profile: () => profile,
        retry: () => retry,
        logger: this.log,
        ...(o.pollIntervalAverage !== undefined ? { pollIntervalAverage: o.pollIntervalAverage } : {}),
        ...(o.averageScheduledPollInterval !== undefined
          ? { averageScheduledPollInterval: o.averageScheduledPollInterval }
          : {}),
      });
      this.poller.start();
    }
    if (o.cron !== false) {
      // sidekiq-cron's poller: idle while Redis holds no cron jobs.
      this.cron = new CronPoller({
        isActiveJob: (c) => o.registry.activeJobHandlers.has(c),
        ...o.cron,
        redis: o.conn.redis,
        client: o.client,
        logger: this.log,
      });
      this.cron.start();
    }
    const features = await detectFeatures(o.conn.redis);
    if (o.reliable) {
      // Our heartbeat exists now, so nobody mistakes our working lists for orphans.
      await this.recover(true);
      this.recoveryTimer = setInterval(() => void this.recover(false), o.recoveryIntervalMs);
      this.recoveryTimer.unref();
    }
    for (const capsule of o.capsules) {
      const m = new Manager({
        redis: o.conn.redis,
        capsule,
        identity: o.identity,
        reliable: o.reliable,
        features,
        fetchLanes: o.fetchLanes,
        fetchAhead: o.reliable && o.fetchAhead,
        logger: this.log,
        watch: this.watch,
        events: o.events,
        nextTid: () => (++this.tidSeq).toString(36),
        processor: {
          redis: o.conn.redis,
          handlers: o.registry.handlers,
          activeJobHandlers: o.registry.activeJobHandlers,
          middleware: o.registry.middleware,
          retry,
          stats: this.stats,
          unknownClass: o.unknownClass,
          logger: this.log,
          work: this.work,
          stopping: () => this.state !== "running",
          jobLogger: o.jobLogger,
        },
      });
      this.managers.push(m);
      await m.start();
    }
    o.logger.info(`sidekiq-bridge worker ${o.identity} started`, {
      dialect: profile.version,
      capsules: o.capsules.map((c) => ({ name: c.name, concurrency: c.concurrency, queues: Object.keys(c.weights) })),
    });
  }

  private async recover(force: boolean): Promise<void> {
    try {
      for (const m of this.managers) await m.register();
      await recoverOrphans(this.o.conn.redis, identityHost(this.o.identity), this.o.logger, force);
    } catch (e) {
      // An outage is reported once by the connection watch.
      if (!isConnectionError(e)) this.log.warn("could not recover orphaned jobs", { error: (e as Error).message });
    }
  }

  /**
   * Stop fetching new work and stop the poller; running jobs continue
   * (Sidekiq's TSTP). Waits for Redis at most SHUTDOWN_GRACE_MS.
   */
  async quietDown(): Promise<void> {
    if ((await this.quietBy(Date.now() + SHUTDOWN_GRACE_MS)) === TIMED_OUT)
      this.log.warn("Quiet without Redis: the Web UI shows this process quiet once Redis answers again");
  }

  private async quietBy(deadline: number): Promise<void | typeof TIMED_OUT> {
    if (this.state !== "running") return;
    this.state = "quiet";
    this.o.events?.emit("quiet", {});
    // Each manager hands back the jobs it fetched ahead.
    const returned = this.managers.map((m) => m.quiet());
    this.o.logger.info("Terminating quiet threads");
    const done = Promise.all([this.poller?.stop(), this.cron?.stop(), this.heartbeat?.beat(), ...returned]).catch(
      () => undefined,
    );
    return (await bounded(done, deadline)) === TIMED_OUT ? TIMED_OUT : undefined;
  }

  /**
   * Sidekiq's shutdown: quiet, wait up to `timeout` for running jobs, abort
   * the rest and push their raw jobs back to their queues, clear the
   * heartbeat. Settles within `timeout` + SHUTDOWN_GRACE_MS (and a little) whatever
   * Redis does, and never rejects: the result says what could not be done.
   */
  stop(): Promise<StopResult> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<StopResult> {
    const result: StopResult = { clean: true, pushedBack: 0, notPushedBack: 0, problems: [] };
    if (this.state === "new" || this.state === "stopped") {
      this.state = "stopped";
      await this.closeConnections(Date.now() + SHUTDOWN_GRACE_MS, result);
      return result;
    }
    const jobsDeadline = Date.now() + this.o.timeout * 1000;
    const deadline = jobsDeadline + SHUTDOWN_GRACE_MS;
    // Quiet's Redis calls (the poller's last pass, a beat) overlap the wait for jobs.
    const quieted = this.quietBy(deadline);
    this.state = "stopping";
    this.o.events?.emit("stopping", {});
    if (this.recoveryTimer) clearInterval(this.recoveryTimer);
    const stops = await Promise.all(this.managers.map((m) => m.stop(jobsDeadline, deadline)));
    for (const s of stops) {
      result.pushedBack += s.pushedBack;
      result.notPushedBack += s.notPushedBack;
      result.problems.push(...s.problems);
    }
    if (result.pushedBack > 0) this.o.logger.info(`Pushed ${result.pushedBack} jobs back to Redis`);
    await quieted;
    for (const m of this.managers) {
      const closed = m.close().then(
        () => true,
        () => false,
      );
      if ((await bounded(closed, deadline)) !== true) result.problems.push("the working-list registry was not updated");
    }
    if (this.heartbeat) {
      const cleared = await bounded(
        this.heartbeat
          .stop()
          .then(() => this.heartbeat!.clear())
          .catch(() => false),
        deadline,
      );
      if (cleared !== true) result.problems.push("the heartbeat was not cleared (it expires within 60 s)");
    }
    this.state = "stopped";
    // Before closing: a connection still "ready" means Redis is slow or frozen, not gone.
    const why = this.lastReason();
    const answerMayCome = this.o.conn.redis.status === "ready";
    await this.closeConnections(deadline, result);
    result.clean = result.problems.length === 0 && result.notPushedBack === 0;
    if (!result.clean) {
      const n = result.notPushedBack;
      const left =
        n === 0
          ? []
          : this.o.reliable
            ? [
                `${n} unfinished jobs left in the working lists for recovery${answerMayCome ? " (or pushed back, if Redis still runs the request)" : ""}`,
              ]
            : [`${n} unfinished jobs could not be pushed back (basic fetch: they are lost)`];
      this.o.logger.error(`Stopped without Redis (${why}): ${[...left, ...new Set(result.problems)].join("; ")}`);
    }
    this.o.logger.info("Bye!");
    return result;
  }

  /** Why Redis is not answering, in a few words. */
  private lastReason(): string {
    const redis = this.o.conn.redis;
    const last = lastErrorOf(redis);
    if (last) return reasonOf(last);
    return redis.status === "ready" ? "no reply in time" : `connection ${redis.status}`;
  }

  /** Closes what we opened: QUIT while time is left, else drop the sockets (no reconnect loop survives). */
  private async closeConnections(deadline: number, result: StopResult): Promise<void> {
    this.watch.mute();
    const closing = (async () => {
      for (const m of this.managers) await m.close();
      await this.o.client.close();
      if (this.o.conn.owned) await closeConnection(this.o.conn.redis, Math.max(0, deadline - Date.now()));
    })();
    if (
      (await bounded(
        closing.then(() => true).catch(() => false),
        deadline,
      )) !== true
    ) {
      if (result.problems.length === 0) result.problems.push("the connection did not close in time");
    }
    this.gaveUp = true;
    this.dropConnections();
  }

  /** Drops every connection we opened at once: pending and queued commands fail, reconnecting stops. */
  private dropConnections(): void {
    this.watch.mute();
    for (const m of this.managers) m.dropConnections();
    if (this.o.conn.owned) this.o.conn.redis.disconnect();
  }

  /** Busy slots and concurrency per capsule. */
  slots(): Array<{ capsule: string; busy: number; concurrency: number }> {
    return this.managers.map((m) => ({
      capsule: m.capsule.name,
      busy: m.dump().length,
      concurrency: m.capsule.concurrency,
    }));
  }

  /** What each slot is doing (Sidekiq's TTIN dump). */
  dump(): Array<{ tid: string; queue: string; jid?: string | undefined; runningFor: number }> {
    return this.managers.flatMap((m) => m.dump());
  }

  private onRemoteSignal(sig: RemoteSignal): void {
    this.o.logger.info(`Got ${sig} signal`);
    if (sig === "TSTP") void this.quietDown();
    // As Ruby's Process.kill(signal, pid): the CLI then exits as on an OS TERM.
    else if (sig === "TERM" && this.signalsHandled) process.kill(process.pid, "SIGTERM");
    else if (sig === "TERM") void this.stop();
    else this.o.logger.warn("Thread dump", { slots: this.dump() });
  }

  /**
   * OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump. After
   * a stop, `exit` gets EXIT_STOPPED (0) or EXIT_INCOMPLETE (3, something
   * could not be done); a second TERM or INT exits at once with 128 + the
   * signal's number (143, 130).
   */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    const stopOn = (sig: "SIGTERM" | "SIGINT") => () => {
      if (this.stopped) {
        this.o.logger.warn(`Got ${sig.slice(3)} again: exiting now; unfinished jobs stay where recovery finds them`);
        exit(128 + osConstants.signals[sig]);
        return;
      }
      void this.stop().then((r) => exit(r.clean ? EXIT_STOPPED : EXIT_INCOMPLETE));
    };
    const handlers: Array<[NodeJS.Signals, () => void]> = [
      ["SIGTERM", stopOn("SIGTERM")],
      ["SIGINT", stopOn("SIGINT")],
      ["SIGTSTP", () => void this.quietDown()],
      ["SIGTTIN", () => this.o.logger.warn("Thread dump", { slots: this.dump() })],
    ];
    for (const [s, h] of handlers) process.on(s, h);
    this.signalsHandled = true;
    return () => {
      this.signalsHandled = false;
      for (const [s, h] of handlers) process.off(s, h);
    };
  }
}
