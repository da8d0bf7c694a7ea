// sidekiq-bridge/tracing: OpenTelemetry spans and W3C context in jobs (needs @opentelemetry/api).
// Named exports only: the @opentelemetry/api loader stays internal.
export { traceJobs, tracingClientMiddleware, tracingServerMiddleware, type TracingOptions } from "./opentelemetry.js";
