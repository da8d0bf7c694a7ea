// `sidekiq-bridge metrics`: a Prometheus endpoint for the fleet, read from
// Redis at each scrape (queues, latency, the sets, processes by version).
import { SidekiqApi } from "../../core/api/sidekiq-api.js";
import { registerFleetMetrics, serveMetrics } from "../metrics/prometheus.js";
import { API_VERSION_FLAG, connectCli } from "./connect.js";
import { command, integer } from "./command.js";
import { maskUrl, redisUrl } from "./redis-url.js";

export const { summary, help, run } = command({
  name: "metrics",
  summary: "serve Prometheus metrics of the fleet (queues, latency, sets, processes)",
  usage: "[options]",
  about: `Serves GET /metrics in Prometheus text format: queue sizes and latencies, the
retry, scheduled and dead set sizes, busy workers and live processes by
version and runtime, read from Redis at each scrape (docs/OBSERVABILITY.md
lists every metric). A Node worker's own metrics: \`sidekiq-bridge worker --metrics-port\`.`,
  flags: {
    port: { value: "N", help: "port to listen on (default 9394)", parse: integer(0), default: 9394 },
    host: {
      value: "HOST",
      help: "address to bind (default 127.0.0.1; 0.0.0.0 for every interface)",
      default: "127.0.0.1",
    },
    "api-version": API_VERSION_FLAG,
  },
  async run({ values, setUrl }) {
    const { port, host } = values;
    const apiVersion = values["api-version"];
    const url = redisUrl(values.redis);
    setUrl(url);
    // Fail at once on a bad host or password; then a connection that outlives outages.
    (await connectCli(url)).disconnect();
    const api = new SidekiqApi({
      redis: { url, ioredis: { maxRetriesPerRequest: 1, showFriendlyErrorStack: false } },
      ...(apiVersion !== undefined ? { apiVersion } : {}),
    });
    api.redis.on("error", () => {}); // a scrape reports sidekiq_redis_up 0 instead
    const registry = await registerFleetMetrics(api);
    const server = await serveMetrics({ port, host }, registry);
    process.stderr.write(`sidekiq-bridge metrics: http://${host}:${port}/metrics for ${maskUrl(url)}\n`);
    await new Promise<void>((resolve) => {
      const done = () => resolve();
      process.once("SIGTERM", done);
      process.once("SIGINT", done);
    });
    server.close();
    await api.close().catch(() => undefined);
    return 0;
  },
});
