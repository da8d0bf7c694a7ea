// sidekiq-cron as an add-on: its poller runs beside the managers (on by
// default: it idles while Redis holds no cron jobs), `sidekiq-bridge cron`
// manages its jobs, and `migrate audit` names the queues cron feeds.
import type { Addon } from "../addon/addon.js";
import { cronAudit } from "./audit.js";
import { CronPoller, type CronPollerOptions } from "./poller.js";

/** The cron poller's settings on a worker (`cron: { pollInterval: 10 }`); the connection comes from the worker. */
export type CronSettings = Omit<CronPollerOptions, "redis" | "client" | "logger">;

export const cronAddon: Addon<boolean | CronSettings, "cron"> = {
  name: "cron",
  gem: "sidekiq-cron",
  onByDefault: true,
  flag: { name: "no-cron", help: "do not run sidekiq-cron's poller (on by default; idle without cron jobs)" },
  install(seams, option) {
    const settings = option === true ? {} : option;
    seams.service(
      (ctx) =>
        new CronPoller({
          isActiveJob: (c) => seams.isActiveJobClass(c),
          ...settings,
          redis: ctx.redis,
          client: ctx.client,
          logger: ctx.logger,
        }),
    );
  },
  audit: cronAudit,
  commands: { cron: () => import("./cli-command.js") },
};
