// How a sidekiq-bridge process tells itself apart in a mixed fleet: the label
// it adds to its heartbeat's `info.labels`, which Ruby's Web UI shows and the
// API, the audit and `dialect: "auto"` read to tell Node processes from Ruby ones.

/** Label that sidekiq-bridge processes put in their heartbeat `info.labels`. */
export const BRIDGE_LABEL = "sidekiq-bridge";
