// `sidekiq-bridge queues`: list queues, page through one, clear one.
import { apiVersionFlag, COMMON_HELP, COMMON_OPTIONS, intFlag, parseFlags } from "./flags.js";
import { argsPreview, clip, formatDuration, isoSeconds, jobJson, printJson, printTable } from "./output.js";
import { runCommand } from "./run-command.js";
import { payloadSeconds } from "../../core/api/job-entry.js";
import { UsageError } from "./errors.js";
import { withApi } from "./connect.js";

export const summary = "list queues; show a queue's jobs; clear a queue";

export const help = `Usage: sidekiq-bridge queues [list] [options]
       sidekiq-bridge queues show NAME [--offset N] [--limit N] [options]
       sidekiq-bridge queues clear NAME --yes [options]

list   every queue in the queues set (sorted by name) with its size and latency
show   the jobs of queue NAME, newest first (as Sidekiq::Queue#each), a page at a time
clear  delete queue NAME and all its jobs (Sidekiq::Queue#clear: UNLINK + SREM queues)

Options:
      --offset N              show: skip N jobs (default 0)
      --limit N               show: at most N jobs (default 25)
      --yes                   clear: confirm
      --api-version V         latency as this Sidekiq release's API computes it (default 8.1.7)
${COMMON_HELP}`;

export async function run(argv: string[]): Promise<number> {
  return runCommand("queues", async ({ setUrl }) => {
    const { values, positionals } = parseFlags({
      args: argv,
      allowPositionals: true,
      options: {
        ...COMMON_OPTIONS,
        offset: { type: "string" },
        limit: { type: "string" },
        yes: { type: "boolean" },
        "api-version": { type: "string" },
      },
    });
    if (values.help) {
      console.log(help);
      return 0;
    }
    const [action = "list", name, ...extra] = positionals;
    if (!["list", "show", "clear"].includes(action))
      throw new UsageError(`unknown action "${action}": use list, show or clear`);
    if (action === "list" ? name !== undefined : extra.length > 0)
      throw new UsageError(`unexpected argument "${action === "list" ? name : extra[0]}"`);
    if (action !== "list" && (name === undefined || name === ""))
      throw new UsageError(`queues ${action} needs a queue NAME`);
    if (action !== "show" && (values.offset !== undefined || values.limit !== undefined))
      throw new UsageError("--offset and --limit go with queues show");
    if (action === "clear" && !values.yes) throw new UsageError(`refusing to clear queue "${name}" without --yes`);
    const offset = intFlag("offset", values.offset, 0);
    const limit = intFlag("limit", values.limit, 25, 1);
    const apiVersion = apiVersionFlag(values["api-version"]);
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
      const queue = api.queue(name);
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
  });
}
