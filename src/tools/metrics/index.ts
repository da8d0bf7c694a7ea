// sidekiq-bridge/metrics: Prometheus metrics (needs the prom-client package).
// Named exports only: the prom-client loader and its type stay internal.
export {
  instrumentWorker,
  registerFleetMetrics,
  metricsHandler,
  serveMetrics,
  type MetricsOptions,
  type ServeOptions,
} from "./prometheus.js";
