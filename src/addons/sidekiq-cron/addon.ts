// sidekiq-cron as an add-on: its poller runs beside the managers (on by
// default: it idles while Redis holds no cron jobs; install.ts), `sidekiq-bridge
// cron` manages its jobs, and `migrate audit` names the queues cron feeds
// (audit.ts). This entry loads neither: the dashboard reads it for its tab.
import type { Addon } from "../addon.js";
import { lazy } from "../../tools/web/extension.js";
import type { CronPollerOptions } from "./poller.js";
import { cronWebSettings } from "./web/settings.js";

/** The cron poller's settings on a worker (`cron: { pollInterval: 10 }`); the connection comes from the worker. */
export type CronSettings = Omit<CronPollerOptions, "redis" | "client" | "logger">;

const pages = () => import("./web/pages.js");
const actions = () => import("./web/actions.js");

export const cronAddon: Addon<boolean | CronSettings, "cron"> = {
  name: "cron",
  gem: "sidekiq-cron",
  onByDefault: true,
  flag: { name: "no-cron", help: "do not run sidekiq-cron's poller (on by default; idle without cron jobs)" },
  // The gem's Web UI tab, on its routes.
  web: {
    path: "/cron",
    label: "Cron",
    settings: cronWebSettings,
    routes: [
      { method: "GET", pattern: /^\/cron$/, title: "Cron", page: lazy(pages, "cronPage") },
      { method: "GET", pattern: /^\/cron\/namespaces\/([^/]+)$/, title: "Cron", page: lazy(pages, "cronPage") },
      {
        method: "GET",
        pattern: /^\/cron\/namespaces\/([^/]+)\/jobs\/([^/]+)$/,
        title: "Cron",
        page: lazy(pages, "cronJobPage"),
      },
      {
        method: "POST",
        pattern: /^\/cron\/namespaces\/([^/]+)\/all\/([a-z]+)$/,
        title: "Cron",
        action: lazy(actions, "cronAllAction"),
      },
      {
        method: "POST",
        pattern: /^\/cron\/namespaces\/([^/]+)\/jobs\/([^/]+)\/([a-z]+)$/,
        title: "Cron",
        action: lazy(actions, "cronJobAction"),
      },
    ],
  },
  commands: { cron: () => import("./cli-command.js") },
};
