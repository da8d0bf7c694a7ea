// `import`: puts an export back, byte for byte, and proves it did.
//
// Every key is first written under a temporary name, then checked three ways:
// its entry count against the file's, the file's own digest (a damaged file
// is refused), and a digest of what Redis now holds, read back. Only when the
// whole file has arrived (its `end` record, whose totals must match) are the
// temporary keys renamed onto their real names, all in one MULTI, so workers
// never see a half-imported queue. A target that already holds any key the
// export covers is refused unless `force` (then the file's keys replace the
// target's, `queues` is merged, keys not in the file are left alone); without `force` the rename
// is WATCHed, so a key created meanwhile aborts the import. On any failure
// the temporary keys are deleted.
import { importStagingPrefix } from "../../core/wire/bridge-keys.js";
import { randomBytes } from "node:crypto";
import { createReadStream, statSync } from "node:fs";
import type { Redis } from "ioredis";
import { execReplies } from "../../core/redis/replies.js";
import { QUEUES_KEY } from "../../core/wire/keys.js";
import { decodeIter } from "msgpackr";
import { selectKeys, type ExportedKey } from "./dump.js";
import {
  asRecord,
  EntryDigest,
  ExportFormatError,
  UNPACK_OPTIONS,
  type ExportHeader,
  type KeyRecord,
  type KeyType,
} from "./export-format.js";
import type { ProgressFn } from "./stored-jobs.js";

/** An import refused before it writes: e.g. the target already holds keys of the export and `force` is not set. */
export class ImportRefusedError extends Error {
  override name = "ImportRefusedError";
}

/** Options of `importFromFile` / `importFromStream`: `force` to replace keys the target holds, progress. */
export interface ImportOptions {
  /** Replace keys the target already holds. */
  force?: boolean;
  progress?: ProgressFn;
  /** For progress: the input's size in bytes. */
  totalBytes?: number;
}

/** What an import wrote. */
export interface ImportSummary {
  header: Pick<ExportHeader, "createdAt" | "source" | "redisVersion" | "patterns">;
  keys: ExportedKey[];
  entries: number;
  /** Keys that existed in the target and were replaced (only with force). */
  replaced: string[];
  durationMs: number;
}

interface OpenKey {
  rec: KeyRecord;
  /** For messages; Redis gets the exact bytes of rec.key. */
  name: string;
  temp: string;
  written: number;
  digest: EntryDigest;
}

const READ_PAGE = 5000;

/** The digest and entry count of a key as Redis holds it now. */
export async function digestStored(
  redis: Redis,
  key: string,
  type: KeyType,
): Promise<{ count: number; digest: Buffer }> {
  const d = new EntryDigest(type);
  let count = 0;
  if (type === "list") {
    for (let i = 0; ; i += READ_PAGE) {
      const page = await redis.lrangeBuffer(key, i, i + READ_PAGE - 1);
      d.add(page);
      count += page.length;
      if (page.length < READ_PAGE) break;
    }
  } else if (type === "zset") {
    for (let i = 0; ; i += READ_PAGE) {
      const flat = await redis.zrangeBuffer(key, i, i + READ_PAGE - 1, "WITHSCORES");
      d.add(flat.map((b, j) => (j % 2 === 1 ? b.toString("latin1") : b)));
      count += flat.length / 2;
      if (flat.length < READ_PAGE * 2) break;
    }
  } else if (type === "set") {
    const m = await redis.smembersBuffer(key);
    d.add(m);
    count = m.length;
  } else if (type === "hash") {
    const h = await redis.hgetallBuffer(key);
    for (const [f, v] of Object.entries(h)) d.add([Buffer.from(f), v]);
    count = Object.keys(h).length;
  } else {
    const v = await redis.getBuffer(key);
    if (v !== null) {
      d.add([v]);
      count = 1;
    }
  }
  return { count, digest: d.digest() };
}

async function writeItems(redis: Redis, k: OpenKey, items: Array<Buffer | string>): Promise<void> {
  if (items.length === 0) return;
  const t = k.temp;
  switch (k.rec.type) {
    case "list":
      await redis.rpush(t, ...(items as Buffer[]));
      break;
    case "set":
      await redis.sadd(t, ...(items as Buffer[]));
      break;
    case "zset": {
      // ZADD wants score, member: the file holds member, score.
      const args: Array<Buffer | string> = [];
      for (let i = 0; i + 1 < items.length; i += 2) args.push(String(items[i + 1]), items[i]!);
      await redis.zadd(t, ...(args as string[]));
      break;
    }
    case "hash":
      await redis.hset(t, ...(items as Buffer[]));
      break;
    case "string":
      if (items.length !== 1 || k.written > 0)
        throw new ExportFormatError(`string key ${k.name} has more than one value`);
      await redis.set(t, items[0]!);
      break;
  }
}

function pairs(type: KeyType): number {
  return type === "zset" || type === "hash" ? 2 : 1;
}

/** Imports from a stream of bytes (a file, stdin). */
export async function importFromStream(
  redis: Redis,
  input: AsyncIterable<Buffer>,
  o: ImportOptions = {},
): Promise<ImportSummary> {
  const started = Date.now();
  const prefix = importStagingPrefix(randomBytes(6).toString("hex"));
  const temps: string[] = [];
  const done: Array<{ temp: string; name: string; key: Buffer; type: KeyType; count: number }> = [];
  let header: ExportHeader | undefined;
  let open: OpenKey | undefined;
  let ended = false;
  let entries = 0;
  let bytesRead = 0;
  const seenNames = new Set<string>();

  async function* counted(): AsyncGenerator<Buffer> {
    for await (const chunk of input) {
      bytesRead += chunk.length;
      o.progress?.({ phase: "import", done: bytesRead, total: Math.max(o.totalBytes ?? bytesRead, bytesRead) });
      yield chunk;
    }
  }

  const finish = async (k: OpenKey) => {
    if (k.written !== k.rec.count)
      throw new ExportFormatError(
        `the file is damaged: ${k.name} should hold ${k.rec.count} entries, it holds ${k.written}`,
      );
    if (!k.digest.digest().equals(k.rec.digest))
      throw new ExportFormatError(`the file is damaged: the digest of ${k.name} does not match its entries`);
    const stored = await digestStored(redis, k.temp, k.rec.type);
    if (stored.count !== k.rec.count)
      throw new Error(`${k.name}: Redis holds ${stored.count} entries after the import, the file ${k.rec.count}`);
    if (!stored.digest.equals(k.rec.digest))
      throw new Error(`${k.name}: what Redis holds after the import differs from the file`);
    if (k.rec.pttl > 0) await redis.pexpire(k.temp, k.rec.pttl);
    done.push({ temp: k.temp, name: k.name, key: k.rec.key, type: k.rec.type, count: k.rec.count });
    entries += k.rec.count;
  };

  try {
    for await (const value of decodeIter(counted(), UNPACK_OPTIONS) as AsyncIterable<unknown>) {
      if (ended) throw new ExportFormatError("data after the end record");
      const rec = asRecord(value);
      if (!header) {
        if (rec.kind !== "header") throw new ExportFormatError("not a sidekiq-bridge export: no header");
        header = rec;
        const existing = await selectKeys(redis, header.patterns);
        if (existing.length > 0 && !o.force) {
          const shown =
            existing.slice(0, 10).join(", ") + (existing.length > 10 ? `, … (${existing.length} in all)` : "");
          throw new ImportRefusedError(
            `the target Redis is not empty: it already holds ${shown}. Import into an empty database, or pass --force to replace the keys the file holds.`,
          );
        }
        continue;
      }
      if (rec.kind === "header") throw new ExportFormatError("a second header in the file");
      if (rec.kind === "key") {
        if (open) await finish(open);
        const name = rec.key.toString();
        if (seenNames.has(rec.key.toString("hex"))) throw new ExportFormatError(`the file holds ${name} twice`);
        seenNames.add(rec.key.toString("hex"));
        const temp = `${prefix}${temps.length}`;
        temps.push(temp);
        open = { rec, name, temp, written: 0, digest: new EntryDigest(rec.type) };
      } else if (rec.kind === "items") {
        if (!open) throw new ExportFormatError("items before any key");
        if (rec.items.length % pairs(open.rec.type) !== 0)
          throw new ExportFormatError(`${open.name}: an entry split across records`);
        open.digest.add(rec.items);
        await writeItems(redis, open, rec.items);
        open.written += rec.items.length / pairs(open.rec.type);
      } else {
        if (open) await finish(open);
        open = undefined;
        if (rec.keys !== done.length || rec.entries !== entries) {
          throw new ExportFormatError(
            `the file is damaged: its end record counts ${rec.keys} keys and ${rec.entries} entries, the file held ${done.length} and ${entries}`,
          );
        }
        ended = true;
      }
    }
    if (!header) throw new ExportFormatError("the file is empty");
    if (!ended) throw new ExportFormatError("the file is truncated: no end record");

    // All or nothing: rename every temporary key onto its name in one transaction.
    const keys = done.map((d) => d.key);
    if (!o.force && keys.length) await redis.watch(...(keys as unknown as string[]));
    const replaced = (await Promise.all(keys.map((k) => redis.exists(k)))).flatMap((e, i) =>
      e ? [done[i]!.name] : [],
    );
    if (!o.force && replaced.length > 0) {
      await redis.unwatch();
      throw new ImportRefusedError(
        `keys appeared in the target during the import: ${replaced.slice(0, 10).join(", ")}; nothing was changed (use --force to replace them)`,
      );
    }
    const tx = redis.multi();
    for (const d of done) {
      // `queues` is the registry of queue names: with --force, merged rather than replaced,
      // so the target's other queues stay listed.
      if (o.force && d.name === QUEUES_KEY && d.type === "set") tx.sunionstore(d.temp, d.temp, QUEUES_KEY);
      tx.rename(d.temp, d.key as unknown as string);
    }
    const res = await tx.exec();
    if (res === null)
      throw new ImportRefusedError(
        "keys of the import were written in the target while it was switching over; nothing was changed",
      );
    execReplies(res, "import switch-over");
    temps.length = 0;
    return {
      header: {
        createdAt: header.createdAt,
        source: header.source,
        patterns: header.patterns,
        ...(header.redisVersion ? { redisVersion: header.redisVersion } : {}),
      },
      keys: done.map((d) => ({ key: d.name, type: d.type, count: d.count })),
      entries,
      replaced: o.force ? replaced : [],
      durationMs: Date.now() - started,
    };
  } catch (e) {
    if (temps.length > 0) {
      for (let i = 0; i < temps.length; i += 500) await redis.unlink(...temps.slice(i, i + 500)).catch(() => undefined);
    }
    const msg = (e as Error).message ?? "";
    if (/Unexpected end of|end of (input|buffer)|Premature/i.test(msg) && !(e instanceof ExportFormatError)) {
      throw new ExportFormatError(`the file is truncated or not MessagePack: ${msg}`);
    }
    throw e;
  }
}

/** Imports an export file. */
export async function importFromFile(redis: Redis, path: string, o: ImportOptions = {}): Promise<ImportSummary> {
  const size = statSync(path).size;
  return importFromStream(redis, createReadStream(path) as AsyncIterable<Buffer>, { totalBytes: size, ...o });
}
