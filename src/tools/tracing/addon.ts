// OpenTelemetry tracing as the registry knows it: the W3C trace context the
// tracing middleware (opentelemetry.ts) and Ruby's OpenTelemetry Sidekiq
// instrumentation write at the top level of a job. Tracing itself is turned
// on with its middleware, which needs the application's OpenTelemetry API.
import type { Addon } from "../../addons/addon.js";

export const tracingAddon: Addon<never, "tracing"> = {
  name: "tracing",
  gem: "opentelemetry-instrumentation-sidekiq",
  onByDefault: false,
  payloadKeys: ["traceparent", "tracestate", "baggage"],
};
