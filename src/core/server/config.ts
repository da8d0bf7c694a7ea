// Sidekiq::Config for a Node worker process: the one object the worker
// builds and every part holds by reference, as each of Sidekiq's components
// holds its config. The resolved options, the connection and the client, the
// registered handlers, the middleware chain, the event listeners, the error
// and death handlers, the services and the gates all hang off it: what a
// handlers module or an add-on adds after the launcher was built is what the
// launcher, its managers and their processors see, and nothing is copied
// from layer to layer.
import type { Client } from "../client/client.js";
import type { ResolvedOptions } from "../config/resolve.js";
import type { JobLogger } from "../logging/job-logger.js";
import type { LogContext, Logger } from "../logging/logger.js";
import type { OwnedRedis } from "../redis/connection.js";
import { type WorkerEventName, WorkerEvents, type WorkerListener } from "./events.js";
import type { JobGate } from "./job-gate.js";
import type { ErrorHandler } from "./error-handler.js";
import { JobWatch } from "./job-watch.js";
import { MiddlewareChain } from "../middleware/chain.js";
import type { PayloadMarker } from "./payload-marker.js";
import type { ServerMiddleware } from "./types.js";
import type { ServiceFactory } from "./service.js";
import type { DeathHandler, RegisteredHandler } from "./types.js";

export interface ConfigParts {
  /** The options, resolved once and frozen. */
  options: ResolvedOptions;
  identity: string;
  /** The command connection (the heartbeat, pollers and services share it). */
  conn: OwnedRedis;
  /** The worker's own client: the pollers' and services' pushes, in the fleet's dialect. */
  client: Client;
  logger: Logger;
  /** What writes each job's start/done/fail lines (Sidekiq's `config[:job_logger]`). */
  jobLogger: JobLogger;
}

export class Config {
  readonly options: ResolvedOptions;
  readonly identity: string;
  readonly conn: OwnedRedis;
  readonly client: Client;
  readonly logger: Logger;
  /** Handlers by Ruby class name. */
  readonly handlers = new Map<string, RegisteredHandler>();
  /** ActiveJob handlers by job class (routed by `wrapped`). */
  readonly activeJobHandlers = new Map<string, RegisteredHandler>();
  /** Sidekiq's `server_middleware`: add, prepend, insertBefore, insertAfter, remove, exists, clear. */
  readonly serverMiddleware = new MiddlewareChain<ServerMiddleware>("server");
  /** Sidekiq's `death_handlers`. */
  readonly deathHandlers: DeathHandler[] = [];
  /** Sidekiq's `error_handlers`. */
  readonly errorHandlers: ErrorHandler[] = [];
  /** Lifecycle and job events (Sidekiq's `config.on`). */
  readonly events = new WorkerEvents();
  /** Pollers and the like, run beside the managers. */
  readonly services: ServiceFactory[] = [];
  /** Asked before each job runs (sidekiq-throttled's check). */
  readonly gates: JobGate[] = [];
  /** Payload fields of add-ons this worker does not run; set at start, once the handlers module had its say. */
  markers: readonly PayloadMarker[] = [];
  /** What the processor tells about each run: the job lines, the job events, the error handlers. */
  readonly jobWatch: JobWatch;

  constructor(o: ConfigParts) {
    this.options = o.options;
    this.identity = o.identity;
    this.conn = o.conn;
    this.client = o.client;
    this.logger = o.logger;
    this.events.onListenerError = (e, event) =>
      this.logger.error(`a "${event}" listener threw; ignored`, { error: (e as Error)?.message ?? String(e) });
    this.jobWatch = new JobWatch({
      jobLogger: o.jobLogger,
      events: this.events,
      errorHandlers: this.errorHandlers,
      logger: this.logger,
    });
  }

  // What an add-on's install is handed (src/addons/addon.ts, ServerConfig): the
  // same object, as a gem's `Sidekiq.configure_server` block gets the config.

  useServer(mw: ServerMiddleware): void {
    this.serverMiddleware.add(mw);
  }

  useClient(mw: Parameters<Client["use"]>[0]): void {
    this.client.use(mw);
  }

  onDeath(handler: DeathHandler): void {
    this.deathHandlers.push(handler);
  }

  onError(handler: ErrorHandler): void {
    this.errorHandlers.push(handler);
  }

  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): void {
    this.events.on(event, fn);
  }

  service(factory: ServiceFactory): void {
    this.services.push(factory);
  }

  gate(gate: JobGate): void {
    this.gates.push(gate);
  }

  isActiveJobClass(className: string): boolean {
    return this.activeJobHandlers.has(className);
  }

  /** Sidekiq's `handle_exception`: every error handler, or the log when there is none. */
  handleException(error: unknown, context: LogContext): void {
    this.jobWatch.handleException(error, context);
  }
}
