// `sidekiq-bridge stats`: Sidekiq::Stats and the queue summaries.
import { command } from "./command.js";
import { formatDuration, printJson, printTable } from "./output.js";
import { API_VERSION_FLAG, withApi } from "./connect.js";
import { checkEvictionPolicy } from "../../core/redis/eviction-policy.js";

export const { summary, help, run } = command({
  name: "stats",
  summary: "show Sidekiq::Stats: processed, failed, sets, queues, latency",
  usage: "[options]",
  about: `Shows what Sidekiq::Stats shows: processed and failed counts, the sizes of the
scheduled, retry and dead sets, enqueued jobs, processes, busy threads, the
default queue's latency, and each queue's size and latency. Like Sidekiq at
start, it warns on standard error when Redis's maxmemory-policy is not
noeviction (Redis may then delete jobs under memory pressure).`,
  flags: {
    "api-version": {
      ...API_VERSION_FLAG,
      help: "latency as this Sidekiq release's API computes it (default 8.1.7:\nenqueued_at, else created_at; float = seconds, integer = ms)",
    },
  },
  json: true,
  async run({ values, setUrl }) {
    const apiVersion = values["api-version"];
    return withApi(values.redis, setUrl, apiVersion !== undefined ? { apiVersion } : {}, async (api) => {
      // As Sidekiq's CLI at start: a policy that evicts loses jobs silently.
      const eviction = await checkEvictionPolicy(api.redis);
      if (eviction) console.error(eviction);
      const s = await api.stats();
      const queues = await api.queueSummaries();
      if (values.json) {
        printJson({
          processed: s.processed,
          failed: s.failed,
          scheduled_size: s.scheduledSize,
          retry_size: s.retrySize,
          dead_size: s.deadSize,
          enqueued: s.enqueued,
          processes_size: s.processesSize,
          workers_size: s.workersSize,
          default_queue_latency: s.defaultQueueLatency,
          queues: queues.map((q) => ({ name: q.name, size: q.size, latency: q.latency, paused: q.paused })),
        });
        return 0;
      }
      printTable(
        ["STAT", "VALUE"],
        [
          ["processed", String(s.processed)],
          ["failed", String(s.failed)],
          ["enqueued", String(s.enqueued)],
          ["scheduled", String(s.scheduledSize)],
          ["retries", String(s.retrySize)],
          ["dead", String(s.deadSize)],
          ["processes", String(s.processesSize)],
          ["busy", String(s.workersSize)],
          ["default latency", formatDuration(s.defaultQueueLatency)],
        ],
        new Set([1]),
      );
      if (queues.length > 0) {
        console.log("");
        // PAUSED only means something with Sidekiq Pro's `paused` set.
        const paused = queues.some((q) => q.paused);
        printTable(
          ["QUEUE", "SIZE", "LATENCY", ...(paused ? ["PAUSED"] : [])],
          queues.map((q) => [
            q.name,
            String(q.size),
            formatDuration(q.latency),
            ...(paused ? [q.paused ? "yes" : ""] : []),
          ]),
          new Set([1, 2]),
        );
      }
      return 0;
    });
  },
});
