// `sidekiq-bridge processes`: Sidekiq::ProcessSet (Ruby and Node processes)
// and, with --work, Sidekiq::WorkSet's jobs a page at a time (oldest first,
// read as the Busy page reads them, so memory does not grow with the fleet).
import { RawJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";
import { clip, formatDuration, isoSeconds, printJson, printTable } from "./output.js";
import { COMMON_HELP, COMMON_OPTIONS, parseFlags } from "./flags.js";
import { runCommand } from "./run-command.js";
import { UsageError } from "./errors.js";
import { withApi } from "./connect.js";

export const summary = "list live Sidekiq processes, Ruby and Node (and their running jobs)";

export const help = `Usage: sidekiq-bridge processes [options]

Lists the live processes as Sidekiq::ProcessSet does (it first prunes members
whose heartbeat expired, at most once a minute, like Ruby): identity, runtime
(ruby, or node for sidekiq-bridge workers), version, queues, busy/threads,
quiet, age and time since the last heartbeat.

Options:
      --work                  also list the jobs running now (Sidekiq::WorkSet),
                              oldest first, --limit of them (default 100) from --offset
      --limit N               running jobs to list with --work (default 100)
      --offset N              running jobs to skip with --work (default 0)
${COMMON_HELP}`;

function count(v: string | undefined, flag: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d{1,9}$/.test(v)) throw new UsageError(`${flag} takes a whole number, not "${v}"`);
  return Number(v);
}

export async function run(argv: string[]): Promise<number> {
  return runCommand("processes", async ({ setUrl }) => {
    const { values, positionals } = parseFlags({
      args: argv,
      allowPositionals: true,
      options: { ...COMMON_OPTIONS, work: { type: "boolean" }, limit: { type: "string" }, offset: { type: "string" } },
    });
    if (values.help) {
      console.log(help);
      return 0;
    }
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const limit = count(values.limit, "--limit", 100);
    const offset = count(values.offset, "--offset", 0);
    return withApi(values.redis, setUrl, {}, async (api) => {
      const procs = await api.processes.list();
      const jobs = values.work
        ? (await api.processes.page({ jobs: { page: 1, count: limit, offset } })).jobs!
        : { total: 0, rows: [] };
      const work = jobs.rows;
      const now = api.now() / 1000;
      if (values.json) {
        const out: { [k: string]: RubyJsonValue } = {
          processes: procs.map((p) => ({
            identity: p.identity,
            hostname: p.hostname ?? null,
            pid: p.pid ?? null,
            tag: p.tag ?? null,
            runtime: p.side,
            version: p.version ?? null,
            labels: p.labels,
            queues: p.queues,
            concurrency: p.concurrency,
            busy: p.busy,
            quiet: p.quiet,
            embedded: p.embedded,
            started_at: p.startedAt ?? null,
            beat: p.beat,
            age: p.startedAt !== undefined ? now - p.startedAt : null,
            rss: p.rss,
            rtt_us: p.rttUs,
          })),
        };
        if (values.work) {
          out.work = work.map((w) => ({
            process: w.process,
            tid: w.tid,
            queue: w.queue ?? null,
            run_at: w.runAt,
            jid: w.jid ?? null,
            class: w.displayClass ?? null,
            job: w.record ? new RawJson(w.payload) : w.payload,
          }));
          out.work_total = jobs.total;
        }
        printJson(out);
        return 0;
      }
      if (procs.length === 0) console.log("No live Sidekiq processes.");
      else {
        printTable(
          ["IDENTITY", "RUNTIME", "VERSION", "QUEUES", "BUSY", "QUIET", "AGE", "BEAT"],
          procs.map((p) => [
            p.identity,
            p.side,
            p.version ?? "-",
            clip(p.queues.join(",") || "-", 40),
            `${p.busy}/${p.concurrency}`,
            p.quiet ? "quiet" : "",
            p.startedAt !== undefined ? formatDuration(now - p.startedAt) : "-",
            p.beat > 0 ? `${formatDuration(now - p.beat)} ago` : "-",
          ]),
          new Set([4]),
        );
      }
      if (values.work) {
        console.log("");
        if (work.length === 0) console.log(jobs.total === 0 ? "No running jobs." : `No running jobs past ${offset}.`);
        else {
          console.log(`Running jobs ${offset + 1}–${offset + work.length} of ${jobs.total}, oldest first:`);
          printTable(
            ["PROCESS", "TID", "QUEUE", "JID", "CLASS", "STARTED"],
            work.map((w) => [
              w.process,
              w.tid,
              w.queue ?? "-",
              w.jid ?? "-",
              clip(w.displayClass ?? "-", 40),
              isoSeconds(w.runAt),
            ]),
          );
        }
      }
      return 0;
    });
  });
}
