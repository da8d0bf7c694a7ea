// `sidekiq-bridge export FILE`: queues and job sets (and optionally stats) to
// a MessagePack file, byte for byte (docs/MIGRATION.md, src/tools/migration/dump.ts).
import { exportToFile, exportToStream, exportPatterns, type ExportSummary } from "../migration/dump.js";
import { progressLine } from "../migration/progress.js";
import { connectCli } from "./connect.js";
import { UsageError } from "./errors.js";
import { command } from "./command.js";
import { maskUrl as maskRedisUrl, redisUrl } from "./redis-url.js";

export const { summary, help, run } = command({
  name: "export",
  summary: "write queues, schedule, retry, dead (and stats) to a MessagePack file",
  usage: "FILE [options]",
  about: `Writes every queue (queue:*), the queues set, schedule, retry and dead to FILE
(MessagePack, see docs/MIGRATION.md), byte for byte: payloads as raw bytes,
sorted-set scores as the exact strings Redis prints, TTLs kept. FILE "-" is stdout.
Each key is read atomically; for a point-in-time copy of all keys, quiet the
fleet and stop producers first.`,
  flags: {
    stats: { help: "also stat:* (processed/failed counters and their daily keys)" },
    include: { value: "PATTERN", help: "also keys matching this glob (repeatable)", multiple: true },
  },
  json: "print the summary as JSON (on stderr when FILE is -)",
  positionals: Infinity,
  async run({ values, positionals, setUrl }) {
    const url = redisUrl(values.redis);
    setUrl(url);
    if (positionals.length !== 1)
      throw new UsageError(
        positionals.length ? `one FILE, got ${positionals.length}` : "say where to write: sidekiq-bridge export FILE",
      );
    const file = positionals[0]!;
    const redis = await connectCli(url);
    const p = progressLine(process.stderr, "export");
    try {
      const o = { stats: values.stats, include: values.include, source: url, progress: p.update };
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
  },
});
