// Services run beside the managers, as Sidekiq's pollers run beside its
// processors: started once the process has its heartbeat, quieted with the
// fetchers (a quiet process enqueues nothing), stopped before the connections
// close. sidekiq-cron's poller is one; an add-on contributes its own through
// this seam, and the launcher knows none of them by name.
import type { Redis } from "ioredis";
import type { Client } from "../client/client.js";
import type { Logger } from "../logging/logger.js";
import type { WireProfile } from "../wire/dialect.js";

/** What a service is given when the worker starts. */
export interface ServiceContext {
  /** The worker's command connection. */
  redis: Redis;
  /** The worker's client (pushes in the fleet's dialect, with the worker's client middleware). */
  client: Client;
  /** The fleet's release, known once the worker runs. */
  profile: WireProfile;
  identity: string;
  logger: Logger;
}

/** A long-running part of the worker beside the managers (a poller). */
export interface Service {
  /** For log lines. */
  readonly name: string;
  start(): void | Promise<void>;
  /** Stops it; resolves once its current round is done. Called at quiet. */
  stop(): Promise<void>;
}

/** Builds a service once the worker runs. */
export type ServiceFactory = (ctx: ServiceContext) => Service;
