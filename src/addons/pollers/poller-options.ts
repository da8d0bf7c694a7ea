// What a gem's poller (sidekiq-cron's, sidekiq-scheduler's) is built with on
// a worker: which classes are ActiveJob classes (unless its settings say),
// its settings, then the connection, client and logger of its service
// context and the worker's identity (its claims are recoverable by others).
import type { ServiceContext } from "../../core/server/service.js";
import type { ServerConfig } from "../addon.js";

export function pollerOptions<S extends object>(config: ServerConfig, settings: S, ctx: ServiceContext) {
  return {
    isActiveJob: (c: string) => config.isActiveJobClass(c),
    ...settings,
    redis: ctx.redis,
    client: ctx.client,
    logger: ctx.logger,
    identity: ctx.identity,
  };
}
