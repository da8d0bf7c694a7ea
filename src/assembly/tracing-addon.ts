// OpenTelemetry tracing as the registry knows it: the W3C trace context the
// tracing middleware (src/tools/tracing/opentelemetry.ts) and Ruby's
// OpenTelemetry Sidekiq instrumentation write at the top level of a job.
// Tracing itself is turned on with its middleware, which needs the
// application's OpenTelemetry API. The tool knows no add-on: this entry,
// built from the keys it writes, is the top layer's.
import type { Addon } from "../addons/addon.js";
import { CARRIER_KEYS } from "../tools/tracing/trace-context.js";

export const tracingAddon: Addon<never, "tracing"> = {
  name: "tracing",
  gem: "opentelemetry-instrumentation-sidekiq",
  onByDefault: false,
  payloadKeys: CARRIER_KEYS,
};
