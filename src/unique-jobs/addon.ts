// sidekiq-unique-jobs as an add-on: `uniqueJobs: true` (or its options) on a
// worker runs the gem's server middleware and death handler; without it, a
// job carrying a `lock` is warned about (its lock would never be released),
// and `migrate audit` blocks queues whose jobs carry locks.
import type { Addon } from "../addon/addon.js";
import { lazy } from "../web/route.js";
import { uniqueJobsAudit } from "./audit.js";
import type { UniqueJobsOptions } from "./config.js";
import { isUniqueJobsMiddleware, UNHANDLED_LOCK_WARNING } from "./marker.js";
import { uniqueJobs } from "./server.js";

const pages = () => import("./web/pages.js");
const actions = () => import("./web/actions.js");

export const uniqueJobsAddon: Addon<boolean | UniqueJobsOptions, "uniqueJobs"> = {
  name: "uniqueJobs",
  gem: "sidekiq-unique-jobs",
  onByDefault: false,
  markers: [{ field: "lock", warning: UNHANDLED_LOCK_WARNING }],
  install(seams, option) {
    const u = uniqueJobs({ logger: seams.logger, ...(option === true ? {} : option) });
    seams.useServer(u.middleware);
    seams.onDeath(u.onDeath);
  },
  ownsMiddleware: isUniqueJobsMiddleware,
  audit: uniqueJobsAudit,
  // The gem's Web UI tab.
  web: {
    path: "/locks",
    label: "Locks",
    routes: [
      { method: "GET", pattern: /^\/locks$/, title: "Locks", page: lazy(pages, "locksPage") },
      {
        method: "POST",
        pattern: /^\/locks\/delete-all$/,
        title: "Locks",
        action: lazy(actions, "deleteAllLocksAction"),
      },
      { method: "GET", pattern: /^\/locks\/changelogs$/, title: "Changelogs", page: lazy(pages, "changelogsPage") },
      {
        method: "POST",
        pattern: /^\/locks\/changelogs\/delete-all$/,
        title: "Changelogs",
        action: lazy(actions, "clearChangelogAction"),
      },
      { method: "GET", pattern: /^\/locks\/([^/]+)$/, title: "Lock", page: lazy(pages, "lockDetailPage") },
      {
        method: "POST",
        pattern: /^\/locks\/([^/]+)\/delete$/,
        title: "Lock",
        action: lazy(actions, "deleteLockAction"),
      },
    ],
  },
};
