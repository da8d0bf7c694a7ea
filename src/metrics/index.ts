// sidekiq-bridge/metrics: Prometheus metrics (needs the prom-client package).
export * from "./prometheus.js";
