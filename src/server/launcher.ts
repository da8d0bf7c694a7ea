// Sidekiq's Launcher: starts and stops everything a worker process runs
// beside its managers (one per capsule): the heartbeat, the scheduled poller,
// the recovery of dead processes' working lists, and the OS and remote
// signals. Quiet stops fetching and polling; stop waits, hands back, clears.
import type { Client } from "../client/client.js";
import { BRIDGE_LABEL } from "../client/fleet.js";
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
import { Poller } from "./scheduled.js";
import { detectFeatures } from "./server-features.js";
import { Stats } from "./stats.js";
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
  recoveryIntervalMs: number;
  scheduler: boolean;
  pollIntervalAverage?: number | undefined;
  averageScheduledPollInterval?: number | undefined;
  unknownClass: UnknownClassPolicy;
  /** Seconds to wait for running jobs at shutdown. */
  timeout: number;
  tag: string;
  labels: string[];
  embedded: boolean;
  /** Job lines, events and error handlers; lifecycle events. */
  jobLogger?: JobLogger;
  events?: WorkerEvents;
}

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
  private recoveryTimer?: NodeJS.Timeout;
  private stopped?: Promise<void>;
  private tidSeq = 0;

  constructor(private readonly o: LauncherOptions) {}

  get quiet(): boolean {
    return this.state !== "running";
  }

  get started(): boolean {
    return this.state !== "new";
  }

  async run(): Promise<void> {
    if (this.state !== "new") throw new Error(`worker already ${this.state}`);
    const o = this.o;
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
      logger: { error: (m) => o.logger.error(m), warn: (m) => o.logger.warn(m) },
    });
    await this.heartbeat.start(); // the first beat, then one every beatSeconds
    if (o.scheduler) {
      this.poller = new Poller({
        redis: o.conn.redis,
        identity: o.identity,
        client: o.client,
        profile: () => profile,
        retry: () => retry,
        logger: o.logger,
        ...(o.pollIntervalAverage !== undefined ? { pollIntervalAverage: o.pollIntervalAverage } : {}),
        ...(o.averageScheduledPollInterval !== undefined
          ? { averageScheduledPollInterval: o.averageScheduledPollInterval }
          : {}),
      });
      this.poller.start();
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
        logger: o.logger,
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
          logger: o.logger,
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
      this.o.logger.warn("could not recover orphaned jobs", { error: (e as Error).message });
    }
  }

  /** Stop fetching new work and stop the poller; running jobs continue (Sidekiq's TSTP). */
  async quietDown(): Promise<void> {
    if (this.state !== "running") return;
    this.state = "quiet";
    this.o.events?.emit("quiet", {});
    for (const m of this.managers) m.quiet();
    this.o.logger.info("Terminating quiet threads");
    await this.poller?.stop();
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
    this.o.events?.emit("stopping", {});
    const pushed = await Promise.all(this.managers.map((m) => m.stop(this.o.timeout * 1000)));
    const total = pushed.reduce((a, b) => a + b, 0);
    if (total > 0) this.o.logger.info(`Pushed ${total} jobs back to Redis`);
    if (this.recoveryTimer) clearInterval(this.recoveryTimer);
    for (const m of this.managers) await m.close();
    await this.heartbeat?.stop();
    await this.heartbeat
      ?.clear()
      .catch((e: Error) => this.o.logger.warn("could not clear the heartbeat", { error: e.message }));
    this.state = "stopped";
    await this.closeConnections();
    this.o.logger.info("Bye!");
  }

  private async closeConnections(): Promise<void> {
    for (const m of this.managers) await m.close();
    await this.o.client.close();
    if (this.o.conn.owned) await this.o.conn.redis.quit().catch(() => undefined);
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
    else if (sig === "TERM") void this.stop();
    else this.o.logger.warn("Thread dump", { slots: this.dump() });
  }

  /** OS signals as Sidekiq's CLI: TERM/INT stop, TSTP quiet, TTIN dump. */
  handleSignals(exit: (code: number) => void = (c) => process.exit(c)): () => void {
    const handlers: Array<[NodeJS.Signals, () => void]> = [
      ["SIGTERM", () => void this.stop().then(() => exit(0))],
      ["SIGINT", () => void this.stop().then(() => exit(0))],
      ["SIGTSTP", () => void this.quietDown()],
      ["SIGTTIN", () => this.o.logger.warn("Thread dump", { slots: this.dump() })],
    ];
    for (const [s, h] of handlers) process.on(s, h);
    return () => {
      for (const [s, h] of handlers) process.off(s, h);
    };
  }
}
