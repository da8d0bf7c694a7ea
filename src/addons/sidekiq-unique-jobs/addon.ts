// sidekiq-unique-jobs as an add-on: `uniqueJobs: true` (or its options) on a
// worker runs the gem's server middleware and death handler; without it, a
// job carrying a `lock` is warned about (its lock would never be released),
// and `migrate audit` blocks queues whose jobs carry locks.
import type { Addon } from "../addon.js";
import { lazy } from "../../tools/web/extension.js";
import { resolveConfig, type UniqueJobsOptions } from "./config.js";
import { UNIQUE_JOBS_MIDDLEWARE } from "./marker.js";

/** The fields the gem's client middleware writes into a payload (SidekiqUniqueJobs::Job.prepare and the lock options). */
const UNIQUE_JOBS_PAYLOAD_KEYS = [
  "lock",
  "lock_args",
  "lock_args_method",
  "lock_digest",
  "lock_expiration",
  "lock_info",
  "lock_limit",
  "lock_prefix",
  "lock_timeout",
  "lock_ttl",
  "on_conflict",
  "on_client_conflict",
  "on_server_conflict",
  "unique_across_queues",
  "unique_across_workers",
  "apartment",
];

/** `--unique-jobs 8` or `--unique-jobs 9`: the gem's major version. */
function parseGemFlag(v: string): UniqueJobsOptions {
  if (v !== "8" && v !== "9") throw new Error(`--unique-jobs must be 8 or 9 (the gem's major version), got "${v}"`);
  return { gem: v === "8" ? 8 : 9 };
}

const pages = () => import("./web/pages.js");
const actions = () => import("./web/actions.js");

export const uniqueJobsAddon: Addon<boolean | UniqueJobsOptions, "uniqueJobs"> = {
  name: "uniqueJobs",
  gem: "sidekiq-unique-jobs",
  onByDefault: false,
  flag: {
    name: "unique-jobs",
    value: "GEM",
    help: "run sidekiq-unique-jobs (the fleet's gem major version: 8 or 9)",
    parse: parseGemFlag,
  },
  enable: "the worker option uniqueJobs: true (or its options; --unique-jobs 8 on the command line)",
  markers: [
    {
      field: "lock",
      what: "a sidekiq-unique-jobs lock",
      breaks:
        "its lock would never be released, so later pushes with the same arguments would be rejected as duplicates",
    },
  ],
  payloadKeys: UNIQUE_JOBS_PAYLOAD_KEYS,
  middleware: UNIQUE_JOBS_MIDDLEWARE,
  // The gem's Web UI tab.
  web: {
    path: "/locks",
    label: "Locks",
    // The fleet's gem (8 unless `extensions: { uniqueJobs: { gem: 9 } }`), as the worker's option reads it.
    settings: (raw) => resolveConfig((raw ?? {}) as UniqueJobsOptions),
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
