// `sidekiq-bridge scheduled | retries | dead`: the three sorted sets, listed
// and acted on with the semantics of Ruby's Sidekiq::API (src/core/api/sorted-set.ts).
import type { JobFilter } from "../../core/api/job-entry.js";
import { BulkActionError, BULK_BATCH_SIZE, MAX_BULK_BATCH_SIZE, type BulkSummary } from "../../core/api/bulk-action.js";
import type { JobSetName, SortedEntry } from "../../core/api/sorted-entry.js";
import type { SortedJobSet } from "../../core/api/sorted-set.js";
import { DEAD_KEY, RETRY_KEY, SCHEDULE_KEY } from "../../core/wire/keys.js";
import type { RubyJsonValue } from "../../core/wire/ruby-json.js";
import { argsPreview, clip, isoSeconds, jobJson, printJson, printTable } from "./output.js";
import { command, type CommandModule, dialect, integer } from "./command.js";
import { UsageError } from "./errors.js";
import { withApi } from "./connect.js";

type Action = "list" | "retry" | "delete" | "kill" | "add-to-queue";

/** Exit codes of an action with --all beyond 0 (every entry done) and 2 (usage). */
const EXIT_PARTIAL = 1; // some entries failed or a middleware stopped them: they stay in the set
const EXIT_INTERRUPTED = 3; // stopped by SIGINT / SIGTERM or Redis out of memory: run the same command again to finish
const REFUSED = "a client middleware stopped the push; the job stays in the set";

const ACTION_TEXT: Record<Exclude<Action, "list">, string> = {
  retry: "push back to its queue now, retry_count - 1 (SortedEntry#retry)",
  delete: "remove for good (ZREM)",
  kill: "move to the dead set (SortedEntry#kill)",
  "add-to-queue": "push to its queue now (SortedEntry#add_to_queue)",
};

function makeCommand(
  name: string,
  key: JobSetName,
  what: string,
  actions: Array<Exclude<Action, "list">>,
): CommandModule {
  const module = command({
    name,
    summary: `list and act on the ${what} (${["list", ...actions].join(", ")})`,
    usage: [
      "[list] [--class C] [--queue Q] [--limit N] [--offset N] [options]",
      "ACTION JID... [options]",
      "ACTION --all [--class C] [--queue Q] [options]",
    ],
    about: `The ${what} (the "${key}" sorted set), listed newest score first as Ruby's
JobSet#each does.`,
    actions: {
      list: "the entries (default), filtered by class and queue",
      ...Object.fromEntries(actions.map((a) => [a, ACTION_TEXT[a]])),
    },
    flags: {
      class: { value: "C", help: "the job class (the ActiveJob class for wrapped jobs, like the Web UI)" },
      queue: { value: "Q", help: "the job's queue" },
      limit: { value: "N", help: "list: at most N entries (default 25)", parse: integer(1) },
      offset: { value: "N", help: "list: skip N matching entries (default 0)", parse: integer(0) },
      all: { help: "act on every (matching) entry" },
      yes: { help: "confirm delete --all" },
      "batch-size": {
        value: "N",
        help: `--all: entries per atomic batch (default ${BULK_BATCH_SIZE}, at most ${MAX_BULK_BATCH_SIZE})`,
        parse: integer(1, MAX_BULK_BATCH_SIZE),
      },
      dialect: {
        value: "D",
        help: "pushes write auto (default), 6, 7, 8 or a version's enqueued_at unit",
        parse: dialect,
      },
    },
    json: true,
    positionals: Infinity,
    footer: `With --all the action applies to every entry (or every entry matching
--class/--queue), lowest score first, as Ruby's ${key === DEAD_KEY ? "retry_all" : "retry_all / kill_all"} does, but
in atomic batches: one Lua call takes up to --batch-size entries out of the
set and writes each to its queue (or the dead set) only if it was still
there, so workers, pollers and Ruby's Web UI acting meanwhile never make a
job run twice or vanish, and a kill -9 loses nothing. An interrupted action
(or one stopped by Ctrl-C, after its batch in flight) is finished by running
it again. Progress goes to stderr every second. "delete --all" needs --yes;
without filters it is Ruby's clear (UNLINK).

The CLI runs no client middleware (it loads no application code): jobs are
pushed as Ruby's Client.push would with an empty chain. To run your chain
(unique-jobs' client lock, trace propagation) on a bulk retry, use the API
with your Client: new SidekiqApi({ redis, client }).retries.bulk("retry").

Exit codes: 0 every entry done (some may have been taken by another process
meanwhile: "gone"); 1 some stayed in the set (failed, or stopped by
middleware); 2 usage; 3 interrupted (run again to finish): by a signal, or because Redis
refused a write at maxmemory (the message says so; free memory first).
--json prints a summary: done, gone, refused, failed_count, failed (the first
100), scanned, total, batches, interrupted, elapsed_ms, and error when Redis
stopped it.`,
    async run({ values, action: actionArg, positionals: jids, setUrl }) {
      const action = actionArg as Action;
      const filter: JobFilter = {};
      if (values.class !== undefined) filter.className = values.class;
      if (values.queue !== undefined) filter.queue = values.queue;
      const filtered = values.class !== undefined || values.queue !== undefined;
      if (action === "list") {
        if (jids.length > 0)
          throw new UsageError(`unexpected argument "${jids[0]}" (list takes --class, --queue, --limit, --offset)`);
        if (values.all || values.yes) throw new UsageError("--all and --yes go with an action (retry, delete, ...)");
      } else {
        if (values.limit !== undefined || values.offset !== undefined)
          throw new UsageError("--limit and --offset go with list");
        if (values.all && jids.length > 0) throw new UsageError("give JIDs or --all, not both");
        if (!values.all && jids.length === 0) throw new UsageError(`${name} ${action} needs JIDs or --all`);
        if (!values.all && filtered)
          throw new UsageError("--class and --queue filter --all; with JIDs, name the jobs only");
        if (values.all && action === "delete" && !values.yes)
          throw new UsageError(
            `refusing to delete ${filtered ? "every matching" : "every"} ${name} entry without --yes`,
          );
      }
      const { limit = 25, offset = 0 } = values;
      if (values["batch-size"] !== undefined && !values.all) throw new UsageError("--batch-size goes with --all");
      const batchSize = values["batch-size"];
      return withApi(
        values.redis,
        setUrl,
        values.dialect !== undefined ? { dialect: values.dialect } : {},
        async (api) => {
          const set = api.set(key);
          if (action === "list") return await list(set, filter, offset, limit, values.json);
          if (values.all) return await bulk(set, action, filtered ? filter : undefined, batchSize, values.json);
          return await byJid(set, action, jids, values.json);
        },
      );
    },
  });

  async function list(
    set: SortedJobSet,
    filter: JobFilter,
    offset: number,
    limit: number,
    json: boolean,
  ): Promise<number> {
    const [size, entries] = await Promise.all([set.size(), set.list({ offset, limit, filter })]);
    if (json) {
      printJson({
        set: key,
        size,
        offset,
        limit,
        entries: entries.map((e) => ({ score: Number(e.score), ...jobJson(e) })),
      });
      return 0;
    }
    console.log(
      `${name}: ${size} entr${size === 1 ? "y" : "ies"}${entries.length < size ? `, showing ${entries.length}` : ""}`,
    );
    if (entries.length === 0) return 0;
    const errorCol = key !== SCHEDULE_KEY;
    printTable(
      [
        key === SCHEDULE_KEY ? "RUN AT" : key === RETRY_KEY ? "NEXT RETRY" : "DIED AT",
        "JID",
        "CLASS",
        "QUEUE",
        ...(errorCol ? ["RETRIES", "ERROR"] : ["ARGS"]),
      ],
      entries.map((e) => [
        isoSeconds(e.at),
        e.jid ?? "-",
        clip(e.displayClass ?? "-", 40),
        e.queue ?? "-",
        ...(errorCol ? [e.record?.raw("retry_count") ?? "-", clip(errorText(e), 60)] : [argsPreview(e)]),
      ]),
    );
    return 0;
  }

  function errorText(e: SortedEntry): string {
    const cls = e.record?.getString("error_class");
    const msg = e.record?.getString("error_message");
    return cls || msg ? `${cls ?? ""}${msg ? `: ${msg}` : ""}` : "-";
  }

  async function byJid(
    set: SortedJobSet,
    action: Exclude<Action, "list">,
    jids: string[],
    json: boolean,
  ): Promise<number> {
    const done: string[] = [];
    const notFound: string[] = [];
    const failed: Array<{ jid: string; error: string }> = [];
    for (const jid of jids) {
      const e = await set.find(jid);
      if (!e) {
        notFound.push(jid);
        continue;
      }
      // One atomic move each (bulk-action.ts), so a crash cannot lose the job.
      const r = await set.bulk(action, { entries: [e] });
      if (r.moved === 1) done.push(jid);
      else if (r.gone === 1)
        notFound.push(jid); // taken by someone else between find and action
      else failed.push({ jid, error: r.failures[0]?.error ?? REFUSED });
    }
    if (json) printJson({ set: key, action, done: done.length, jids: done, not_found: notFound, failed });
    else {
      for (const j of done) console.log(`${pastTense(action)} ${j}`);
      for (const j of notFound) console.error(`not found in ${name}: ${j}`);
      for (const f of failed) console.error(`failed ${f.jid}: ${f.error}`);
    }
    return notFound.length + failed.length > 0 ? 1 : 0;
  }

  async function bulk(
    set: SortedJobSet,
    action: Exclude<Action, "list">,
    filter: JobFilter | undefined,
    batchSize: number | undefined,
    json: boolean,
  ): Promise<number> {
    // SIGINT / SIGTERM stop after the batch in flight: every entry is then in
    // its set or its destination, and the summary says how far it got.
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    let lastReport = Date.now();
    let r: BulkSummary;
    // Redis refused a write at maxmemory: the action stopped, with exact counts, to be run again.
    let error: string | undefined;
    try {
      r = await set
        .bulk(action, {
          ...(filter ? { filter } : {}),
          ...(batchSize !== undefined ? { batchSize } : {}),
          signal: stop.signal,
          onProgress: (p) => {
            if (Date.now() - lastReport < 1000) return;
            lastReport = Date.now();
            process.stderr.write(`${name} ${action}: ${progressLine(p)}\n`);
          },
        })
        .catch((e: unknown) => {
          if (!(e instanceof BulkActionError)) throw e;
          error = e.message;
          return e.summary;
        });
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
    const failed: RubyJsonValue[] = r.failures.map((f) => ({ job: f.raw, error: f.error }));
    const code = r.interrupted ? EXIT_INTERRUPTED : r.failed + r.refused > 0 ? EXIT_PARTIAL : 0;
    if (json)
      printJson({
        set: key,
        action,
        all: true,
        done: r.moved,
        gone: r.gone,
        refused: r.refused,
        failed_count: r.failed,
        failed,
        scanned: r.scanned,
        total: r.total,
        batches: r.batches,
        interrupted: r.interrupted,
        elapsed_ms: r.elapsedMs,
        ...(error !== undefined ? { error } : {}),
      });
    else {
      console.log(`${pastTense(action)} ${r.moved} ${name} entr${r.moved === 1 ? "y" : "ies"}`);
      if (r.gone > 0) console.log(`${r.gone} taken by another process meanwhile (left to it)`);
      if (r.refused > 0) console.error(`${r.refused} stopped by client middleware, left in ${name}`);
      for (const f of r.failures) console.error(`failed: ${f.error}: ${clip(f.raw, 100)}`);
      if (r.failed > r.failures.length) console.error(`... and ${r.failed - r.failures.length} more failed`);
      if (error !== undefined) console.error(`stopped: ${error}`);
      if (r.interrupted) console.error(`interrupted: ${progressLine(r)}; run the same command again to finish`);
    }
    return code;
  }

  return module;
}

function progressLine(p: BulkSummary): string {
  const pct = p.total > 0 ? ` (${Math.min(100, Math.floor((100 * p.scanned) / p.total))}%)` : "";
  return `${p.scanned}/${p.total} looked at${pct}, ${p.moved} done, ${p.gone} gone, ${p.refused} refused, ${p.failed} failed`;
}

function pastTense(a: Exclude<Action, "list">): string {
  return { retry: "Retried", delete: "Deleted", kill: "Killed", "add-to-queue": "Added to queue" }[a];
}

export const scheduled = makeCommand("scheduled", SCHEDULE_KEY, "scheduled jobs", [
  "add-to-queue",
  "delete",
  "kill",
  "retry",
]);
export const retries = makeCommand("retries", RETRY_KEY, "retries", ["retry", "delete", "kill"]);
export const dead = makeCommand("dead", DEAD_KEY, "dead jobs", ["retry", "delete", "kill"]);
