// IterableJob as an add-on: its handlers are registered with the worker's
// registerIterable (the cursor lives in `it-<jid>` as in Ruby), and
// `migrate audit` checks that classes with saved cursors have one.
import type { Addon } from "../addon/addon.js";
import { iterableAudit } from "./audit.js";

export const iterableAddon: Addon<never, "iterable"> = {
  name: "iterable",
  gem: "Sidekiq::IterableJob",
  onByDefault: true,
  audit: iterableAudit,
};
