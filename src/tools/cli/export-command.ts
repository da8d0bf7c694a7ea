// `sidekiq-bridge export FILE`: queues and job sets (and optionally stats) to
// a MessagePack file, byte for byte (docs/MIGRATION.md, src/tools/migration/dump.ts).
import { exportToFile, exportToStream, exportPatterns, type ExportSummary } from "../migration/dump.js";
import { progressLine } from "../migration/progress.js";
import { connectCli } from "./connect.js";
import { UsageError } from "./errors.js";
import { parseFlags } from "./flags.js";
import { maskUrl as maskRedisUrl, redisUrl } from "./redis-url.js";
import { runCommand } from "./run-command.js";

export const summary = "write queues, schedule, retry, dead (and stats) to a MessagePack file";

export const help = `Usage: sidekiq-bridge export FILE [options]

Writes every queue (queue:*), the queues set, schedule, retry and dead to FILE
(MessagePack, see docs/MIGRATION.md), byte for byte: payloads as raw bytes,
sorted-set scores as the exact strings Redis prints, TTLs kept. FILE "-" is stdout.
Each key is read atomically; for a point-in-time copy of all keys, quiet the
fleet and stop producers first.

Options:
      --stats              also stat:* (processed/failed counters and their daily keys)
      --include PATTERN    also keys matching this glob (repeatable)
      --redis URL          Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379/0)
      --json               print the summary as JSON (on stderr when FILE is -)
  -h, --help               this help`;

export async function run(argv: string[]): Promise<number> {
  let url: string | undefined;
  return runCommand("export", async ({ setUrl }) => {
    const { values, positionals } = parseFlags({
      args: argv,
      options: {
        redis: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        stats: { type: "boolean" },
        include: { type: "string", multiple: true },
      },
      allowPositionals: true,
    });
    setUrl((url = redisUrl(values.redis)));
    if (positionals.length !== 1)
      throw new UsageError(
        positionals.length ? `one FILE, got ${positionals.length}` : "say where to write: sidekiq-bridge export FILE",
      );
    const file = positionals[0]!;
    const include = (values.include as string[] | undefined) ?? [];
    const redis = await connectCli(url);
    const p = progressLine(process.stderr, "export");
    try {
      const o = { stats: !!values.stats, include, source: url, progress: p.update };
      const summary: ExportSummary =
        file === "-" ? await exportToStream(redis, process.stdout, o) : await exportToFile(redis, file, o);
      p.done();
      const doc = { file, source: maskRedisUrl(url), patterns: exportPatterns(o), ...summary };
      const toStderr = file === "-";
      if (values.json) (toStderr ? process.stderr : process.stdout).write(`${JSON.stringify(doc, null, 2)}\n`);
      else {
        const lines = [
          `Exported ${summary.keys.length} keys, ${summary.entries} entries (${summary.bytes} bytes) from ${doc.source} to ${file} in ${summary.durationMs} ms`,
        ];
        for (const k of summary.keys) lines.push(`  ${k.key.padEnd(24)} ${k.type.padEnd(6)} ${k.count}`);
        (toStderr ? process.stderr : process.stdout).write(`${lines.join("\n")}\n`);
      }
      return 0;
    } finally {
      p.done();
      redis.disconnect();
    }
  });
}
