// sidekiq-scheduler as an add-on: its scheduler runs beside the managers (on
// by default: it idles while Redis holds no schedules), `sidekiq-bridge
// schedule` manages the schedules, the dashboard has the gem's Recurring Jobs
// tab, and `migrate audit` names the queues schedules feed. Its names are not
// `scheduler`, which is Sidekiq's own poller of scheduled jobs and retries.
import type { Addon } from "../addon.js";
import { lazy } from "../../tools/web/extension.js";
import type { SidekiqSchedulerSettings } from "./poller.js";

const pages = () => import("./web/pages.js");
const actions = () => import("./web/actions.js");

export const sidekiqSchedulerAddon: Addon<boolean | SidekiqSchedulerSettings, "sidekiqScheduler"> = {
  name: "sidekiqScheduler",
  gem: "sidekiq-scheduler",
  onByDefault: true,
  flag: {
    name: "no-sidekiq-scheduler",
    help: "do not run sidekiq-scheduler's scheduler (on by default; idle without schedules)",
  },
  enable: "on by default (sidekiqScheduler: true or its options; off with --no-sidekiq-scheduler)",
  // The gem pushes a schedule's config less its rufus keys: `rails_env` rides along in the payload.
  payloadKeys: ["rails_env"],
  // The gem's Web UI tab, on its routes.
  web: {
    path: "/recurring-jobs",
    label: "Recurring Jobs",
    routes: [
      { method: "GET", pattern: /^\/recurring-jobs$/, title: "Recurring Jobs", page: lazy(pages, "recurringJobsPage") },
      {
        method: "POST",
        pattern: /^\/recurring-jobs\/toggle-all$/,
        title: "Recurring Jobs",
        action: lazy(actions, "toggleAllAction"),
      },
      {
        method: "POST",
        pattern: /^\/recurring-jobs\/([^/]+)\/(enqueue|toggle)$/,
        title: "Recurring Jobs",
        action: lazy(actions, "recurringJobAction"),
      },
    ],
  },
  commands: { schedule: () => import("./cli-command.js") },
};
