// sidekiq-bridge/tracing: OpenTelemetry spans and W3C context in jobs (needs @opentelemetry/api).
export * from "./opentelemetry.js";
