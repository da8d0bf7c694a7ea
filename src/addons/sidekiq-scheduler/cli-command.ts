// `sidekiq-bridge schedule`: sidekiq-scheduler's schedules (src/addons/sidekiq-scheduler/),
// what its Recurring Jobs tab shows and does: list, show, enable, disable,
// enqueue now.
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
import { SchedulerApi } from "./scheduler-api.js";
import { entryProblems, intervalOf, type ScheduleEntry } from "./schedule-entry.js";

export const { summary, help, run } = command({
  name: "schedule",
  summary: "sidekiq-scheduler schedules: list, show, enable, disable, enqueue",
  usage: ["[list] [options]", "show|enable|disable|enqueue NAME [options]"],
  about: `The schedules of sidekiq-scheduler (its \`schedules\` hash), as its Web UI's
Recurring Jobs tab shows them. Ruby and Node read and write the same keys.`,
  actions: {
    list: "every schedule: interval, status, class, queue, last and next time",
    show: "one schedule: its config, status, last and next time",
    enable: "enable it (sidekiq-scheduler:states), on every Ruby and Node scheduler",
    disable: "disable it",
    enqueue: 'push it now, whatever its schedule or status ("Enqueue now")',
  },
  flags: {
    "key-prefix": { value: "P", help: "SidekiqScheduler::RedisManager.key_prefix (default none)" },
    ...pushFlags("enqueue: "),
  },
  json: true,
  positionals: 1,
  async run({ values, action, positionals: [name], setUrl }) {
    if (action === "list" && name !== undefined) throw new UsageError(`list takes no name (got "${name}")`);
    if (action !== "list" && name === undefined) throw new UsageError(`schedule ${action} needs the schedule's NAME`);
    const keyPrefix = values["key-prefix"];
    const prefix = keyPrefix !== undefined ? { keyPrefix } : {};

    return withApi(values.redis, setUrl, {}, async (sidekiq) => {
      const api = new SchedulerApi({ redis: sidekiq.redis, ...prefix });
      const { last, next } = await api.times();
      const describe = async (e: ScheduleEntry) => ({
        name: e.name,
        interval: intervalOf(e),
        type: e.type ?? null,
        class: e.className ?? null,
        queue: e.queue,
        enabled: await api.isEnabled(e).catch(() => e.enabledInConfig),
        description: e.description ?? null,
        last_time: last[e.name] ?? null,
        next_time: next[e.name] ?? null,
        problems: entryProblems(e, Date.now()),
      });
      if (action === "list") {
        const { entries, unreadable } = await api.list();
        const rows = await Promise.all(entries.map(describe));
        if (values.json) {
          printJson({ schedules: rows, unreadable });
          return 0;
        }
        printTable(
          ["NAME", "INTERVAL", "STATUS", "CLASS", "QUEUE", "LAST", "NEXT"],
          rows.map((r) => [
            clip(r.name, 40),
            clip(r.interval, 30),
            r.problems.length ? "invalid" : r.enabled ? "enabled" : "disabled",
            clip(r.class ?? "-", 40),
            r.queue,
            r.last_time ?? "-",
            r.next_time ?? "-",
          ]),
        );
        for (const u of unreadable) process.stderr.write(`unreadable schedule ${u.name}: ${u.error}\n`);
        return 0;
      }
      const scheduleName = name!;
      const entry = await api.find(scheduleName).catch((e: Error) => {
        throw new CommandError(`schedule "${scheduleName}" cannot be read: ${e.message}`);
      });
      if (!entry) throw new CommandError(`no schedule "${scheduleName}"`);
      if (action === "show") {
        const out = { ...(await describe(entry)), config: entry.config };
        if (values.json) printJson(out as never);
        else
          printTable(
            ["FIELD", "VALUE"],
            [
              ["name", out.name],
              ["interval", out.interval],
              ["status", out.enabled ? "enabled" : "disabled"],
              ["class", out.class ?? "-"],
              ["queue", out.queue],
              ["description", out.description ?? ""],
              ["config", JSON.stringify(entry.config)],
              ["last time", out.last_time ?? "-"],
              ["next time", out.next_time ?? "-"],
              ["problems", out.problems.join("; ") || "-"],
            ],
          );
        return 0;
      }
      if (action === "enable" || action === "disable") {
        await api.setEnabled(scheduleName, action === "enable");
        if (values.json) printJson({ name: scheduleName, enabled: action === "enable" });
        else console.log(`Schedule ${scheduleName} is ${action}d`);
        return 0;
      }
      return withClient(sidekiq.redis, values, async (client) => {
        const jid = await new SchedulerApi({ redis: sidekiq.redis, client, ...prefix }).enqueue(scheduleName);
        if (values.json) printJson({ name: scheduleName, jid });
        else console.log(`Enqueued schedule ${scheduleName}: jid ${jid ?? "none (stopped by middleware)"}`);
        return 0;
      });
    });
  },
});
