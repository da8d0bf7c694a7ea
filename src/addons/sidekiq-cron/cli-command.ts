// `sidekiq-bridge cron`: sidekiq-cron's jobs (src/addons/sidekiq-cron/), what its Web UI tab
// shows and does: list, show, enable, disable, delete, enqueue now.
import { CronApi } from "./cron-api.js";
import type { CronJob } from "./cron-job.js";
import { RawJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import {
  clip,
  printJson,
  printTable,
  CommandError,
  UsageError,
  command,
  pushFlags,
  withApi,
  withClient,
} from "../../tools/cli/extension.js";

function jobJson(job: CronJob, extra: Record<string, RubyJsonValue> = {}): { [k: string]: RubyJsonValue } {
  const h = job.toHash();
  let next: string | null;
  try {
    next = job.parsedCron().nextTime(new Date())?.toISOString() ?? null;
  } catch {
    next = null; // an invalid schedule has no next time
  }
  return {
    name: job.name,
    namespace: job.namespace,
    cron: job.cron,
    class: job.klass,
    queue: job.queue,
    status: job.status,
    description: job.description ?? null,
    args: new RawJson(h.args),
    message: new RawJson(h.message),
    date_as_argument: job.dateAsArgument,
    active_job: job.activeJob,
    source: job.source,
    last_enqueue_time: job.lastEnqueueTime?.toISOString() ?? null,
    next_enqueue_time: next,
    errors: job.errors(),
    ...extra,
  };
}

export const { summary, help, run } = command({
  name: "cron",
  summary: "sidekiq-cron jobs: list, show, enable, disable, delete, enqueue",
  usage: [
    "[list] [--namespace NS | --all-namespaces] [options]",
    "show|enable|disable|delete|enqueue NAME [--namespace NS] [options]",
  ],
  about: `The cron jobs of sidekiq-cron 2.x (the cron_jobs:<namespace> sets), as its Web
UI's Cron tab shows them. Ruby and Node read and write the same keys.`,
  actions: {
    list: "the jobs of a namespace (default), with schedule, status, class, queue, last enqueue",
    show: "one job: every field, the next fire time and its jid history",
    enable: "enable! (the poller enqueues it again)",
    disable: "disable! (the poller skips it)",
    delete: "destroy: the job, its :enqueued and :jid_history",
    enqueue: 'enqueue! now, whatever its schedule or status ("Enqueue Now")',
  },
  flags: {
    namespace: { value: "NS", help: "the namespace (default: default)" },
    "all-namespaces": { help: "list: every namespace in Redis" },
    ...pushFlags("enqueue: "),
  },
  json: true,
  positionals: 1,
  async run({ values, action, positionals: [name], setUrl }) {
    if (action === "list" && name !== undefined) throw new UsageError(`list takes no name (got "${name}")`);
    if (action !== "list" && name === undefined) throw new UsageError(`cron ${action} needs the job's NAME`);
    if (values["all-namespaces"] && (action !== "list" || values.namespace !== undefined))
      throw new UsageError("--all-namespaces goes with list, without --namespace");
    const namespace = values.namespace ?? "default";

    return withApi(values.redis, setUrl, {}, async (sidekiq) => {
      if (action === "list") {
        const cron = new CronApi({ redis: sidekiq.redis });
        const { jobs, unreadable } = await cron.list(values["all-namespaces"] ? "*" : namespace);
        // The Web UI's order: enabled first, then by name.
        jobs.sort((a, b) => Number(!a.enabled) - Number(!b.enabled) || a.name.localeCompare(b.name));
        if (values.json) {
          printJson({
            jobs: jobs.map((j) => jobJson(j)),
            unreadable: unreadable.map((u) => ({ key: u.key, namespace: u.namespace, error: u.error })),
          });
          return 0;
        }
        printTable(
          ["NAME", "NAMESPACE", "CRON", "STATUS", "CLASS", "QUEUE", "LAST ENQUEUED"],
          jobs.map((j) => [
            clip(j.name, 40),
            j.namespace,
            j.cron,
            j.errors().length ? "invalid" : j.status,
            clip(j.klass, 40),
            j.queue,
            j.lastEnqueueTime?.toISOString() ?? "-",
          ]),
        );
        for (const u of unreadable) process.stderr.write(`unreadable cron job ${u.key}: ${u.error}\n`);
        return 0;
      }
      const jobName = name!;
      if (action === "enqueue") {
        return withClient(sidekiq.redis, values, async (client) => {
          const jid = await new CronApi({ redis: sidekiq.redis, client }).enqueue(jobName, namespace);
          if (values.json) printJson({ name: jobName, namespace, jid });
          else console.log(`Enqueued cron job ${jobName} (${namespace}): jid ${jid ?? "none (stopped by middleware)"}`);
          return 0;
        });
      }
      const cron = new CronApi({ redis: sidekiq.redis });
      if (action === "show") {
        const job = await cron.find(jobName, namespace);
        if (!job) throw new CommandError(`no valid cron job "${jobName}" in namespace "${namespace}"`);
        const history = await cron.jidHistory(jobName, namespace);
        const out = jobJson(job, {
          jid_history: history.map((h) => ({ jid: h.jid, enqueued: h.enqueued })),
        });
        if (values.json) {
          printJson(out);
          return 0;
        }
        const h = job.toHash();
        printTable(
          ["FIELD", "VALUE"],
          [
            ["name", job.name],
            ["namespace", job.namespace],
            ["cron", job.cron],
            ["status", job.status],
            ["class", job.klass],
            ["queue", job.queue],
            ["args", h.args],
            ["message", h.message],
            ["description", job.description ?? ""],
            ["date_as_argument", String(job.dateAsArgument)],
            ["active_job", String(job.activeJob)],
            ["source", job.source],
            ["last enqueued", job.lastEnqueueTime?.toISOString() ?? "-"],
            ["next", String(out.next_enqueue_time ?? "-")],
          ],
        );
        if (history.length > 0) {
          console.log("");
          printTable(
            ["JID", "ENQUEUED"],
            history.map((e) => [e.jid ?? "-", e.enqueued]),
          );
        }
        return 0;
      }
      if (action === "delete") {
        if (!(await cron.destroy(jobName, namespace)))
          throw new CommandError(`no valid cron job "${jobName}" in namespace "${namespace}"`);
        if (values.json) printJson({ name: jobName, namespace, deleted: true });
        else console.log(`Deleted cron job ${jobName} (${namespace})`);
        return 0;
      }
      const job = action === "enable" ? await cron.enable(jobName, namespace) : await cron.disable(jobName, namespace);
      if (values.json) printJson({ name: job.name, namespace: job.namespace, status: job.status });
      else console.log(`Cron job ${job.name} (${job.namespace}) is ${job.status}`);
      return 0;
    });
  },
});
