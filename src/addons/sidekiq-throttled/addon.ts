// sidekiq-throttled as an add-on: on by default. Without throttles it only
// watches for classes Ruby throttles (the gem's keys in Redis) and warns once
// per class this worker runs without one; `throttled: { classes: {...} }`
// gives Node the throttles of the Ruby classes' `sidekiq_throttle`, checked
// with the gem's own scripts after each fetch and released after each job.
import type { Addon } from "../addon.js";
import type { ThrottledOptions } from "./options.js";

export const throttledAddon: Addon<boolean | ThrottledOptions, "throttled"> = {
  name: "throttled",
  gem: "sidekiq-throttled",
  onByDefault: true,
  flag: {
    name: "no-throttled",
    help: "do not check sidekiq-throttled's keys (on by default: warns about classes Ruby throttles)",
  },
  enable:
    "the worker option throttled: { classes: { ... } } (or `export const throttled = { classes: { ... } }` from the handlers module)",
};
