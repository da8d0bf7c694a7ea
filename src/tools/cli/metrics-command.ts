// `sidekiq-bridge metrics`: a Prometheus endpoint for the fleet, read from
// Redis at each scrape (queues, latency, the sets, processes by version).
import { SidekiqApi } from "../../core/api/sidekiq-api.js";
import { registerFleetMetrics, serveMetrics } from "../metrics/prometheus.js";
import { connectCli } from "./connect.js";
import { apiVersionFlag, intFlag, parseFlags } from "./flags.js";
import { DEFAULT_REDIS_URL, maskUrl, redisUrl } from "./redis-url.js";
import { runCommand } from "./run-command.js";
import { UsageError } from "./errors.js";

export const summary = "serve Prometheus metrics of the fleet (queues, latency, sets, processes)";

export const help = `Usage: sidekiq-bridge metrics [options]

Serves GET /metrics in Prometheus text format: queue sizes and latencies, the
retry, scheduled and dead set sizes, busy workers and live processes by
version and runtime, read from Redis at each scrape (docs/OBSERVABILITY.md
lists every metric). A Node worker's own metrics: \`sidekiq-bridge worker --metrics-port\`.

Options:
      --port N                port to listen on (default 9394)
      --host HOST             address to bind (default 127.0.0.1; 0.0.0.0 for every interface)
      --api-version V         latency as this Sidekiq release's API computes it (default 8.1.7)
      --redis URL             Redis URL (default: $REDIS_URL or ${DEFAULT_REDIS_URL})
  -h, --help                  this help`;

export async function run(argv: string[]): Promise<number> {
  return runCommand("metrics", async ({ setUrl }) => {
    const { values, positionals } = parseFlags({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        redis: { type: "string" },
        "api-version": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
    if (values.help) {
      console.log(help);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const port = intFlag("port", values.port, 9394);
    const apiVersion = apiVersionFlag(values["api-version"]);
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
    const host = values.host ?? "127.0.0.1";
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
  });
}
