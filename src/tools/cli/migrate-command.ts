// `sidekiq-bridge migrate audit|move|timestamps`: the tools for moving queues
// between Ruby and Node and between Sidekiq 7 and 8 (docs/MIGRATION.md).
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Redis } from "ioredis";
import { auditQueues, collectHandlers, emptyHandlers, type AuditReport, type QueueAudit } from "../migration/audit.js";
import { moveJobs, type MoveReport } from "../migration/move.js";
import { migrateTimestamps, type TimestampReport, type TimestampTarget } from "../migration/convert-timestamps.js";
import { JOB_SETS, type JobSet } from "../migration/stored-jobs.js";
import { DEAD_KEY, RETRY_KEY, SCHEDULE_KEY } from "../../core/wire/keys.js";
import { progressLine } from "../migration/progress.js";
import { connectCli } from "./connect.js";
import { UsageError } from "./errors.js";
import { commandGroup, type CommandModule, commandSpec, integer } from "./command.js";
import type { AuditAddon } from "../migration/extension.js";
import { printJson } from "./output.js";
import { redisUrl } from "./redis-url.js";

/** A repeatable flag whose values may also be comma-separated lists. */
function list(values: readonly string[]): string[] {
  return values
    .flatMap((x) => x.split(","))
    .map((s) => s.trim())
    .filter(Boolean);
}

const JSON_HELP = "one JSON document on stdout (progress stays on stderr)";

/**
 * `sidekiq-bridge migrate`. `addons`: the worker's add-ons, whose checks the
 * audit runs, loaded only when it runs (given by the command map, src/assembly/main.ts).
 */
export function migrateCommand(addons: () => Promise<readonly AuditAddon[]>): CommandModule {
  const audit = commandSpec({
    name: "migrate audit",
    summary: "per queue: its job classes and whether Node handles them all",
    usage: "[options]",
    about: `Per queue: its job classes (queued, scheduled, retry, dead), the live
processes serving it, and READY if Node has a handler for every class,
else BLOCKED with the reasons. Read-only.`,
    flags: {
      queue: {
        short: "q",
        value: "NAME",
        help: "queue to audit (repeatable; default: every known queue)",
        multiple: true,
      },
      handlers: {
        short: "r",
        value: "MODULE",
        help: "the Node handlers module, as for `worker -r` (repeatable)",
        multiple: true,
      },
      "node-classes": { value: "A,B", help: "classes Node handles (plain or ActiveJob; repeatable)", multiple: true },
      "dead-blocks": { help: "classes found only in the dead set block too (default: warning)" },
    },
    json: JSON_HELP,
    async run({ values, setUrl }) {
      const url = redisUrl(values.redis);
      setUrl(url);
      const handlers = emptyHandlers();
      for (const m of list(values.handlers)) {
        let mod: unknown;
        try {
          mod = await import(pathToFileURL(resolve(m)).href);
        } catch (e) {
          throw new Error(`cannot load the handlers module ${m}: ${(e as Error).message}`, { cause: e });
        }
        await collectHandlers(mod, handlers, await addons());
      }
      for (const c of list(values["node-classes"])) handlers.classes.add(c);
      return withRedis(url, async (redis) => {
        const p = progressLine(process.stderr, "migrate audit");
        const report = await auditQueues(
          redis,
          {
            queues: list(values.queue),
            handlers,
            deadBlocks: values["dead-blocks"],
            progress: p.update,
          },
          await addons(),
        );
        p.done();
        if (values.json) printJson(report);
        else process.stdout.write(formatAudit(report));
        return report.queues.some((q) => q.verdict === "BLOCKED") ? 3 : 0;
      });
    },
  });

  const move = commandSpec({
    name: "migrate move",
    summary: "move the jobs of some classes (or all) from one queue to another",
    usage: "--from QUEUE --to QUEUE (--class NAME... | --all) [options]",
    about: `Moves the jobs of some classes (or all) from one queue to another, with
their scheduled and retry entries, one atomic step per job, under traffic.`,
    flags: {
      from: { value: "QUEUE", help: "source queue" },
      to: { value: "QUEUE", help: "destination queue" },
      class: {
        value: "NAME",
        help: "job class to move, ActiveJob by its own class (repeatable, or A,B)",
        multiple: true,
      },
      all: { help: "move every job of the queue" },
      dead: { help: "also rewrite dead-set entries bound for --from (default: schedule, retry)" },
      passes: { value: "N", help: "passes until nothing is left to move (default 3)", parse: integer(1), default: 3 },
      "dry-run": { help: "count what would move" },
    },
    json: JSON_HELP,
    async run({ values, setUrl }) {
      const url = redisUrl(values.redis);
      setUrl(url);
      const { from, to } = values;
      if (from === undefined || to === undefined) throw new UsageError("move needs --from QUEUE and --to QUEUE");
      const classes = list(values.class);
      if (classes.length === 0 && !values.all)
        throw new UsageError("say which jobs to move: --class NAME (repeatable) or --all");
      if (classes.length > 0 && values.all) throw new UsageError("--class and --all exclude each other");
      if (from === to) throw new UsageError("--from and --to name the same queue");
      const sets: JobSet[] = values.dead ? [SCHEDULE_KEY, RETRY_KEY, DEAD_KEY] : [SCHEDULE_KEY, RETRY_KEY];
      return withRedis(url, async (redis) => {
        const p = progressLine(process.stderr, "migrate move");
        const report = await moveJobs(redis, {
          from,
          to,
          ...(classes.length ? { classes } : {}),
          sets,
          maxPasses: values.passes,
          dryRun: values["dry-run"],
          progress: p.update,
        });
        p.done();
        if (values.json) printJson(report);
        else process.stdout.write(formatMove(report));
        return report.remaining > 0 ? 3 : 0;
      });
    },
  });

  const timestamps = commandSpec({
    name: "migrate timestamps",
    summary: "rewrite payload times between Sidekiq 6/7 and 8",
    usage: "--to 7|8 [options]",
    about: `Rewrites queued, scheduled, retry and dead payloads between float seconds
(Sidekiq 6/7) and integer milliseconds (Sidekiq 8), under traffic.`,
    flags: {
      to: { value: "7|8", help: "target unit: 7 (also 6) float seconds, 8 integer milliseconds" },
      queue: { short: "q", value: "NAME", help: "only these queues (repeatable; default: all) ...", multiple: true },
      sets: { value: "LIST", help: '... and these sets (default schedule,retry,dead; "none" for none)' },
      passes: {
        value: "N",
        help: "repeat while entries written meanwhile remain (default 1)",
        parse: integer(1),
        default: 1,
      },
      "dry-run": { help: "count per key what would change" },
    },
    json: JSON_HELP,
    async run({ values, setUrl }) {
      const url = redisUrl(values.redis);
      setUrl(url);
      const to = Number(values.to);
      if (values.to === undefined || ![6, 7, 8].includes(to))
        throw new UsageError(
          `--to must be 7 or 8 (6 writes what 7 does), got ${values.to === undefined ? "nothing" : `"${values.to}"`}`,
        );
      let sets: JobSet[] = [...JOB_SETS];
      if (values.sets !== undefined) {
        sets = values.sets === "none" ? [] : (list([values.sets]) as JobSet[]);
        for (const s of sets)
          if (!JOB_SETS.includes(s)) throw new UsageError(`--sets takes schedule, retry, dead or none, got "${s}"`);
      }
      const queues = list(values.queue);
      return withRedis(url, async (redis) => {
        const p = progressLine(process.stderr, "migrate timestamps");
        const report = await migrateTimestamps(redis, {
          to: to as TimestampTarget,
          dryRun: values["dry-run"],
          ...(queues.length ? { queues } : {}),
          sets,
          maxPasses: values.passes,
          progress: p.update,
        });
        p.done();
        if (values.json) printJson(report);
        else process.stdout.write(formatTimestamps(report));
        return !report.dryRun && report.totals.remaining > 0 ? 3 : 0;
      });
    },
  });

  return commandGroup({
    name: "migrate",
    summary: "audit, move and rewrite jobs to migrate queues between Ruby and Node, or Sidekiq 8 and 7",
    subcommands: { audit, move, timestamps },
    footer: `Exit status: 0 done (audit: every queue READY); 3 done, but audit found a queue BLOCKED,
or jobs remain (written or routed to the old place during the run: run it again);
1 error; 2 usage error.`,
  });
}

async function withRedis(url: string, fn: (redis: Redis) => Promise<number>): Promise<number> {
  const redis = await connectCli(url);
  try {
    return await fn(redis);
  } finally {
    redis.disconnect();
  }
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + " ".repeat(n - s.length);
}

function describeQueue(q: QueueAudit): string {
  const lines = [`${pad(q.queue, 20)} ${pad(q.verdict, 8)} ${q.size} queued`];
  if (q.classes.length) {
    const cls = q.classes.map((c) => {
      const parts = [
        c.queued && `${c.queued} queued`,
        c.scheduled && `${c.scheduled} scheduled`,
        c.retry && `${c.retry} retry`,
        c.dead && `${c.dead} dead`,
        c.iterating && `${c.iterating} with a saved iteration cursor`,
      ].filter(Boolean);
      return `${c.name}${c.activeJob ? " (ActiveJob)" : ""}${c.handled ? "" : " [no Node handler]"}: ${parts.join(", ")}`;
    });
    lines.push(`  classes:   ${cls.join("; ")}`);
  }
  lines.push(
    `  served by: ${
      q.servedBy.length
        ? q.servedBy
            .map((p) => `${p.runtime} ${p.version ?? "(no version: 6.x)"} ${p.identity}${p.quiet ? " (quiet)" : ""}`)
            .join("; ")
        : "no live process"
    }`,
  );
  for (const r of q.reasons) lines.push(`  BLOCKED:   ${r}`);
  for (const w of q.warnings) lines.push(`  note:      ${w}`);
  return lines.join("\n");
}

export function formatAudit(r: AuditReport): string {
  const out: string[] = [];
  out.push(
    `Node handles: ${[...r.node.classes, ...r.node.activeJobClasses.map((c) => `${c} (ActiveJob)`)].join(", ") || "(nothing given: use --handlers or --node-classes)"}`,
  );
  out.push("");
  for (const q of r.queues) out.push(describeQueue(q), "");
  out.push(`Live processes: ${r.processes.length}`);
  for (const p of r.processes) {
    out.push(
      `  ${pad(p.runtime, 5)} ${pad(p.version ?? "(6.x)", 28)} ${p.identity}  queues: ${p.queues.join(",")}${p.quiet ? "  (quiet)" : ""}`,
    );
  }
  const bad = Object.entries(r.unparseable);
  if (bad.length) out.push(`Unreadable payloads: ${bad.map(([k, n]) => `${k}: ${n}`).join(", ")}`);
  const blocked = r.queues.filter((q) => q.verdict === "BLOCKED").map((q) => q.queue);
  out.push("", blocked.length ? `BLOCKED: ${blocked.join(", ")}` : `All ${r.queues.length} queue(s) READY for Node.`);
  return `${out.join("\n")}\n`;
}

export function formatMove(r: MoveReport): string {
  const out: string[] = [];
  const what = r.classes === "all" ? "every job" : r.classes.join(", ");
  out.push(
    `${r.dryRun ? "Would move" : "Moved"} ${what} from ${r.from} to ${r.to}${r.dryRun ? "" : ` in ${r.passes} pass(es), ${r.durationMs} ms`}:`,
  );
  for (const l of r.locations) {
    out.push(
      `  ${pad(l.key, 24)} scanned ${l.scanned}, ${r.dryRun ? `would move ${l.matched}` : `moved ${l.moved}, gone ${l.gone}${l.conflicts ? `, conflicts ${l.conflicts}` : ""}, remaining ${l.remaining}`}`,
    );
  }
  const by = Object.entries(r.byClass).map(([c, n]) => `${c}: ${n}`);
  if (by.length) out.push(`  by class: ${by.join(", ")}`);
  if (!r.dryRun && r.remaining > 0) {
    out.push(
      `${r.remaining} matching job(s) are still bound for ${r.from}: producers still route them there. Re-route them, then run this again.`,
    );
  }
  return `${out.join("\n")}\n`;
}

export function formatTimestamps(r: TimestampReport): string {
  const out: string[] = [];
  out.push(
    `${r.dryRun ? "Would rewrite" : "Rewrote"} payload times to ${r.unit} (Sidekiq ${r.to === 8 ? "8" : "6/7"})${r.dryRun ? "" : ` in ${r.passes} pass(es), ${r.durationMs} ms`}:`,
  );
  for (const k of r.keys) {
    const parts = [
      `scanned ${k.scanned}`,
      `${r.dryRun ? "to convert" : "converted"} ${k.converted}`,
      `already ${k.alreadyTarget}`,
    ];
    if (!r.dryRun) parts.push(`gone ${k.gone}`);
    if (k.conflicts) parts.push(`conflicts ${k.conflicts}`);
    if (k.unparseable) parts.push(`unreadable ${k.unparseable}`);
    if (!r.dryRun) parts.push(`remaining ${k.remaining}`);
    out.push(`  ${pad(k.key, 24)} ${parts.join(", ")}`);
  }
  if (!r.dryRun && r.totals.remaining > 0) {
    out.push(
      `${r.totals.remaining} payload(s) were written in the old unit during the run (a writer still uses it). Switch it, then run this again.`,
    );
  }
  return `${out.join("\n")}\n`;
}
