// Sidekiq's Launcher: starts and stops everything a worker process runs
// beside its managers (one per capsule): the heartbeat, the scheduled poller,
// the services add-ons contribute (pollers), the recovery of dead processes'
// working lists, and the signals. Quiet stops fetching and the services;
// stop waits, hands back, clears. It holds the worker's Config (config.ts)
// by reference and knows no add-on by name. The jobs running in the process
// are its WorkState (work-state.ts), which its managers fill and its heartbeat
// reads.
import { fleetProfile } from "../client/fleet.js";
import { permissionLogFilter } from "../redis/acl.js";
import { BRIDGE_LABEL, javascriptRuntimeLabel } from "../wire/bridge-label.js";
import {
  bounded,
  closeConnection,
  ConnectionWatch,
  isConnectionError,
  TIMED_OUT,
  whenReady,
} from "../redis/availability.js";
import type { WireProfile } from "../wire/dialect.js";
import { Heartbeat } from "./heartbeat.js";
import type { RetryConfig } from "./job-retry.js";
import type { Logger } from "../logging/logger.js";
import { Manager } from "./manager.js";
import { identityHost, recoverOrphans } from "./recovery.js";
import { ScheduledPoller } from "./scheduled.js";
import { detectFeatures } from "./fetch/index.js";
import { checkEvictionPolicy } from "../redis/eviction-policy.js";
import type { Service } from "./service.js";
import type { Config } from "./config.js";
import { handleOsSignals, onRemoteSignal } from "./signals.js";
import { incompleteStopLine, silenceReason, SHUTDOWN_GRACE_MS, type StopResult } from "./stop-result.js";
import { ExecutionStats } from "./execution-stats.js";
import { type SlotDump, WorkState } from "./work-state.js";

type State = "new" | "running" | "quiet" | "stopping" | "stopped";

export class Launcher {
  private state: State = "new";
  private readonly work = new WorkState();
  private readonly stats = new ExecutionStats();
  private readonly managers: Manager[] = [];
  private heartbeat?: Heartbeat;
  /** The fleet's release, known once running. */
  profile?: WireProfile;
  private poller?: ScheduledPoller;
  private readonly services: Service[] = [];
  private recoveryTimer?: NodeJS.Timeout;
  private stopped?: Promise<StopResult>;
  private readonly watch: ConnectionWatch;
  /** Set once shutdown gave up on Redis: late failures of abandoned calls are not logged. */
  private gaveUp = false;
  /** The logger handed to the heartbeat, poller, services and managers: silent once shutdown gave up. */
  readonly logger: Logger;
  private signalsHandled = false;

  constructor(private readonly config: Config) {
    // A command the Redis user may not run: one error line naming the permission, once.
    const denied = permissionLogFilter(config.conn.redis.options?.username);
    const quietAfterGivingUp =
      (f: (m: string, c?: Record<string, unknown>) => void) => (m: string, c?: Record<string, unknown>) => {
        if (this.gaveUp) return;
        const line = denied(m, c);
        if (line === undefined) f(m, c);
        else if (line !== null) config.logger.error(line);
      };
    this.logger = {
      debug: quietAfterGivingUp((m, c) => config.logger.debug(m, c)),
      info: quietAfterGivingUp((m, c) => config.logger.info(m, c)),
      warn: quietAfterGivingUp((m, c) => config.logger.warn(m, c)),
      error: quietAfterGivingUp((m, c) => config.logger.error(m, c)),
    };
    // One line when Redis goes away, one when it is back (not one per retry).
    this.watch = new ConnectionWatch({ lost: (m) => this.logger.warn(m), back: (m) => this.logger.info(m) });
    if (config.conn.owned) this.watch.add(config.conn.redis);
  }

  get quiet(): boolean {
    return this.state !== "running";
  }

  get started(): boolean {
    return this.state !== "new";
  }

  /** Whether a stop has begun. */
  get stopping(): boolean {
    return this.stopped !== undefined;
  }

  /** The retry rules once the fleet's release is known: the config's, the death handlers, the error handlers. */
  private retryConfig(profile: WireProfile): RetryConfig {
    return {
      profile,
      ...this.config.options.retry,
      deathHandlers: this.config.deathHandlers,
      onHandlerError: (e, c) => this.config.handleException(e, { context: c.context, job: c.job }),
    };
  }

  async run(): Promise<void> {
    if (this.state !== "new") throw new Error(`worker already ${this.state}`);
    const { options, conn } = this.config;
    try {
      // Fail fast, with the reason, when Redis is not there at all.
      await whenReady(conn.redis, options.connectWaitMs);
    } catch (e) {
      this.state = "stopped";
      this.dropConnections();
      throw e;
    }
    const profile = await this.config.client.profile();
    this.profile = profile;
    this.state = "running";
    const retry = this.retryConfig(profile);
    this.heartbeat = new Heartbeat({
      redis: conn.redis,
      profile,
      // The retry path and the poller follow the heartbeat's profile.
      follow: async () => (this.profile = retry.profile = await fleetProfile(this.config.client, this.profile!)),
      identity: this.config.identity,
      tag: options.process.tag,
      labels: [...options.process.labels, BRIDGE_LABEL],
      capsules: options.capsules.map((c) => ({
        name: c.name,
        concurrency: c.concurrency,
        mode: c.mode,
        weights: c.weights,
      })),
      embedded: options.process.embedded,
      work: () => this.work.busy(),
      stats: this.stats,
      quiet: () => this.quiet,
      onSignal: (sig) => onRemoteSignal(this, sig, this.signalsHandled),
      logger: { error: (m) => this.logger.error(m), warn: (m) => this.logger.warn(m) },
    });
    await this.heartbeat.start(); // the first beat, then one every beatSeconds
    this.config.events.emit("heartbeat", {});
    if (options.scheduled.enabled) {
      const { pollIntervalAverage, averageScheduledPollInterval } = options.scheduled;
      this.poller = new ScheduledPoller({
        redis: conn.redis,
        identity: this.config.identity,
        client: this.config.client,
        profile: () => this.profile!,
        retry: () => retry,
        logger: this.logger,
        ...(pollIntervalAverage !== undefined ? { pollIntervalAverage } : {}),
        ...(averageScheduledPollInterval !== undefined ? { averageScheduledPollInterval } : {}),
      });
      this.poller.start();
    }
    const context = {
      redis: conn.redis,
      client: this.config.client,
      profile,
      identity: this.config.identity,
      logger: this.logger,
    };
    for (const make of this.config.services) {
      const service = make(context);
      this.services.push(service);
      await service.start();
    }
    const features = await detectFeatures(conn.redis);
    const eviction = await checkEvictionPolicy(conn.redis);
    if (eviction) this.config.logger.warn(eviction);
    if (options.fetch.reliable) {
      // Our heartbeat exists now, so nobody mistakes our working lists for orphans.
      await this.recover(true);
      this.recoveryTimer = setInterval(() => void this.recover(false), options.fetch.recoveryIntervalMs);
      this.recoveryTimer.unref();
    }
    this.config.events.emit("startup", {});
    for (const capsule of options.capsules) {
      const m = new Manager({
        config: this.config,
        capsule,
        features,
        logger: this.logger,
        watch: this.watch,
        work: this.work,
        processor: {
          config: this.config,
          retry,
          stats: this.stats,
          logger: this.logger,
          stopping: () => this.state !== "running",
        },
      });
      this.managers.push(m);
      await m.start();
    }
    this.config.logger.info(`sidekiq-bridge worker ${this.config.identity} started`, {
      dialect: profile.version,
      runtime: javascriptRuntimeLabel(),
      capsules: options.capsules.map((c) => ({
        name: c.name,
        concurrency: c.concurrency,
        queues: Object.keys(c.weights),
      })),
    });
  }

  private async recover(force: boolean): Promise<void> {
    try {
      for (const m of this.managers) await m.register();
      await recoverOrphans(this.config.conn.redis, identityHost(this.config.identity), this.config.logger, force);
    } catch (e) {
      // An outage is reported once by the connection watch.
      if (!isConnectionError(e)) this.logger.warn("could not recover orphaned jobs", { error: (e as Error).message });
    }
  }

  /**
   * Stop fetching new work and stop the poller; running jobs continue
   * (Sidekiq's TSTP). Waits for Redis at most SHUTDOWN_GRACE_MS.
   */
  async quietDown(): Promise<void> {
    if ((await this.quietBy(Date.now() + SHUTDOWN_GRACE_MS)) === TIMED_OUT)
      this.logger.warn("Quiet without Redis: the Web UI shows this process quiet once Redis answers again");
  }

  private async quietBy(deadline: number): Promise<void | typeof TIMED_OUT> {
    if (this.state !== "running") return;
    this.state = "quiet";
    this.config.events.emit("quiet", {});
    // Each manager hands back the jobs it fetched ahead.
    const returned = this.managers.map((m) => m.quiet());
    this.config.logger.info("Terminating quiet threads");
    const services = this.services.map((s) => s.stop());
    const done = Promise.all([this.poller?.stop(), ...services, this.heartbeat?.beat(), ...returned]).catch(
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
    const jobsDeadline = Date.now() + this.config.options.timeout * 1000;
    const deadline = jobsDeadline + SHUTDOWN_GRACE_MS;
    // Quiet's Redis calls (the poller's last pass, a beat) overlap the wait for jobs.
    const quieted = this.quietBy(deadline);
    this.state = "stopping";
    this.config.events.emit("stopping", {});
    this.config.events.emit("shutdown", {});
    if (this.recoveryTimer) clearInterval(this.recoveryTimer);
    const stops = await Promise.all(this.managers.map((m) => m.stop(jobsDeadline, deadline)));
    for (const s of stops) {
      result.pushedBack += s.pushedBack;
      result.notPushedBack += s.notPushedBack;
      result.problems.push(...s.problems);
    }
    if (result.pushedBack > 0) this.config.logger.info(`Pushed ${result.pushedBack} jobs back to Redis`);
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
    const why = silenceReason(this.config.conn.redis);
    const answerMayCome = this.config.conn.redis.status === "ready";
    await this.closeConnections(deadline, result);
    result.clean = result.problems.length === 0 && result.notPushedBack === 0;
    if (!result.clean)
      this.config.logger.error(incompleteStopLine(result, why, this.config.options.fetch.reliable, answerMayCome));
    this.config.logger.info("Bye!");
    this.config.events.emit("exit", {});
    return result;
  }

  /** Closes what we opened: QUIT while time is left, else drop the sockets (no reconnect loop survives). */
  private async closeConnections(deadline: number, result: StopResult): Promise<void> {
    this.watch.mute();
    const closing = (async () => {
      for (const m of this.managers) await m.close();
      await this.config.client.close();
      if (this.config.conn.owned) await closeConnection(this.config.conn.redis, Math.max(0, deadline - Date.now()));
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
    if (this.config.conn.owned) this.config.conn.redis.disconnect();
  }

  /** Busy slots and concurrency per capsule. */
  slots(): Array<{ capsule: string; busy: number; concurrency: number }> {
    return this.managers.map((m) => ({
      capsule: m.capsule.name,
      busy: this.work.count(m.capsule),
      concurrency: m.capsule.concurrency,
    }));
  }

  /** What each slot is doing (Sidekiq's TTIN dump). */
  dump(): SlotDump[] {
    return this.work.dump();
  }

  /**
   * OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump (see
   * signals.ts). Returns the function that removes the handlers.
   */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    const remove = handleOsSignals(this, exit);
    this.signalsHandled = true;
    return () => {
      this.signalsHandled = false;
      remove();
    };
  }
}
