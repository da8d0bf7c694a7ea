// `sidekiq-bridge queues`: list queues, page through one, clear one.
import { command, integer } from "./command.js";
import { argsPreview, clip, formatDuration, isoSeconds, jobJson, printJson, printTable } from "./output.js";
import { payloadSeconds } from "../../core/api/job-entry.js";
import { UsageError } from "./errors.js";
import { API_VERSION_FLAG, withApi } from "./connect.js";

export const { summary, help, run } = command({
  name: "queues",
  summary: "list queues; show a queue's jobs; clear a queue",
  usage: ["[list] [options]", "show NAME [--offset N] [--limit N] [options]", "clear NAME --yes [options]"],
  actions: {
    list: "every queue in the queues set (sorted by name) with its size and latency",
    show: "the jobs of queue NAME, newest first (as Sidekiq::Queue#each), a page at a time",
    clear: "delete queue NAME and all its jobs (Sidekiq::Queue#clear: UNLINK + SREM queues)",
  },
  flags: {
    offset: { value: "N", help: "show: skip N jobs (default 0)", parse: integer(0) },
    limit: { value: "N", help: "show: at most N jobs (default 25)", parse: integer(1) },
    yes: { help: "clear: confirm" },
    "api-version": API_VERSION_FLAG,
  },
  json: true,
  positionals: 1,
  async run({ values, action, positionals: [name], setUrl }) {
    if (action === "list" && name !== undefined) throw new UsageError(`unexpected argument "${name}"`);
    if (action !== "list" && (name === undefined || name === ""))
      throw new UsageError(`queues ${action} needs a queue NAME`);
    if (action !== "show" && (values.offset !== undefined || values.limit !== undefined))
      throw new UsageError("--offset and --limit go with queues show");
    if (action === "clear" && !values.yes) throw new UsageError(`refusing to clear queue "${name}" without --yes`);
    const { offset = 0, limit = 25 } = values;
    const apiVersion = values["api-version"];
    return withApi(values.redis, setUrl, apiVersion !== undefined ? { apiVersion } : {}, async (api) => {
      if (action === "list") {
        const queues = (await api.queueSummaries()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        if (values.json)
          printJson({
            queues: queues.map((q) => ({ name: q.name, size: q.size, latency: q.latency, paused: q.paused })),
          });
        else if (queues.length === 0) console.log("No queues.");
        else
          printTable(
            ["QUEUE", "SIZE", "LATENCY"],
            queues.map((q) => [q.name, String(q.size), formatDuration(q.latency)]),
            new Set([1, 2]),
          );
        return 0;
      }
      const queue = api.queue(name!);
      if (action === "clear") {
        const size = await queue.size();
        await queue.clear();
        if (values.json) printJson({ queue: queue.name, cleared: size });
        else console.log(`Cleared queue ${queue.name} (${size} job${size === 1 ? "" : "s"} deleted)`);
        return 0;
      }
      const [size, latency, entries] = await Promise.all([queue.size(), queue.latency(), queue.page(offset, limit)]);
      if (values.json) {
        printJson({
          queue: queue.name,
          size,
          latency,
          offset,
          limit,
          entries: entries.map((e) => ({ index: e.index, ...jobJson(e) })),
        });
        return 0;
      }
      console.log(`Queue ${queue.name}: ${size} job${size === 1 ? "" : "s"}, latency ${formatDuration(latency)}`);
      if (entries.length > 0) {
        printTable(
          ["#", "JID", "CLASS", "ENQUEUED AT", "ARGS"],
          entries.map((e) => [
            String(e.index),
            e.jid ?? "-",
            clip(e.displayClass ?? "-", 40),
            isoSeconds(payloadSeconds(e.record, "enqueued_at") ?? payloadSeconds(e.record, "created_at")),
            argsPreview(e),
          ]),
          new Set([0]),
        );
        if (offset + entries.length < size)
          console.log(
            `(${offset + 1}–${offset + entries.length} of ${size}; --offset ${offset + entries.length} for more)`,
          );
      }
      return 0;
    });
  },
});
