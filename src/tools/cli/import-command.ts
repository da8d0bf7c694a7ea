// `sidekiq-bridge import FILE`: puts an export back, byte for byte, checked
// (counts, digests, read back) before anything becomes visible
// (docs/MIGRATION.md, src/tools/migration/restore.ts).
import { accessSync, constants } from "node:fs";
import { importFromFile, importFromStream } from "../migration/restore.js";
import { progressLine } from "../migration/progress.js";
import { connectCli } from "./connect.js";
import { UsageError } from "./errors.js";
import { command } from "./command.js";
import { printJson } from "./output.js";
import { maskUrl as maskRedisUrl, redisUrl } from "./redis-url.js";

export const { summary, help, run } = command({
  name: "import",
  summary: "load an export file into Redis (verified; refuses a non-empty target)",
  usage: "FILE [options]",
  about: `Loads a file written by \`sidekiq-bridge export\` (FILE "-" is stdin). Every key is
written under a temporary name and checked (entry count, the file's digest, and a
digest of what Redis holds, read back); when the whole file has been checked, all
keys are renamed into place in one MULTI, so workers never see half an import.
A target that already holds any key of the export's kind (queue:*, queues,
schedule, retry, dead, and stat:* if exported) is refused, unless --force.`,
  flags: {
    force: { help: "replace the keys the file holds (the queues set is merged; others are left alone)" },
  },
  json: "print the summary as JSON",
  positionals: Infinity,
  async run({ values, positionals, setUrl }) {
    const url = redisUrl(values.redis);
    setUrl(url);
    if (positionals.length !== 1)
      throw new UsageError(
        positionals.length ? `one FILE, got ${positionals.length}` : "say what to load: sidekiq-bridge import FILE",
      );
    const file = positionals[0]!;
    if (file !== "-") {
      try {
        accessSync(file, constants.R_OK);
      } catch (e) {
        throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
          cause: e,
        });
      }
    }
    const redis = await connectCli(url);
    const p = progressLine(process.stderr, "import");
    try {
      const o = { force: values.force, progress: p.update };
      const summary =
        file === "-"
          ? await importFromStream(redis, process.stdin as AsyncIterable<Buffer>, o)
          : await importFromFile(redis, file, o);
      p.done();
      const doc = { file, target: maskRedisUrl(url), ...summary };
      if (values.json) printJson(doc);
      else {
        const lines = [
          `Imported ${summary.keys.length} keys, ${summary.entries} entries into ${doc.target} in ${summary.durationMs} ms (export of ${summary.header.source}, ${summary.header.createdAt}); every key verified`,
        ];
        if (summary.replaced.length) lines.push(`Replaced: ${summary.replaced.join(", ")}`);
        for (const k of summary.keys) lines.push(`  ${k.key.padEnd(24)} ${k.type.padEnd(6)} ${k.count}`);
        process.stdout.write(`${lines.join("\n")}\n`);
      }
      return 0;
    } finally {
      p.done();
      redis.disconnect();
    }
  },
});
