// The export file: a sequence of MessagePack values (msgpackr, plain maps, no
// msgpackr "records" extension, so any MessagePack reader can open it).
//
//   { kind: "header", format: "sidekiq-bridge/export", version: 1, createdAt, source, redisVersion, patterns }
//   for each key:
//     { kind: "key", key: <bin>, type: "list"|"zset"|"set"|"hash"|"string", count, pttl, digest: <bin sha256> }
//     { kind: "items", items: [...] }   (as many as needed, at most ~4 MB or 5,000 entries each)
//   { kind: "end", keys, entries }
//
// Items are raw bytes (MessagePack bin), never re-encoded text:
//   list, set: member, member, ...              (a list from head to tail)
//   zset:      member, score, member, score ... (score: the exact string ZRANGE WITHSCORES printed)
//   hash:      field, value, field, value ...
//   string:    value
// `count` is the number of entries (a zset or hash pair counts once); `pttl`
// is the key's remaining time to live in ms at export (-1: none).
//
// `digest` is SHA-256 over the entries in a canonical order: lists and sorted
// sets in Redis order, sets and hashes sorted by bytes; each byte string is
// prefixed by its length (4 bytes, big endian), each score written as the 8
// bytes of its IEEE double. So the digest of what an import wrote, read back
// from the target Redis, equals the file's whenever the bytes and the score
// values are the same, whatever Redis version prints the scores.
import { createHash, type Hash } from "node:crypto";
import { Packr, Unpackr } from "msgpackr";

export const EXPORT_FORMAT = "sidekiq-bridge/export";
export const EXPORT_VERSION = 1;

export type KeyType = "list" | "zset" | "set" | "hash" | "string";
export const KEY_TYPES: readonly KeyType[] = ["list", "zset", "set", "hash", "string"];

export interface ExportHeader {
  kind: "header";
  format: typeof EXPORT_FORMAT;
  version: number;
  createdAt: string;
  /** Where it came from, without credentials: redis://host:port/db. */
  source: string;
  redisVersion?: string;
  /** The key patterns exported. */
  patterns: string[];
}

export interface KeyRecord {
  kind: "key";
  key: Buffer;
  type: KeyType;
  count: number;
  pttl: number;
  digest: Buffer;
}

export interface ItemsRecord {
  kind: "items";
  items: Array<Buffer | string>;
}

export interface EndRecord {
  kind: "end";
  keys: number;
  entries: number;
}

export type ExportRecord = ExportHeader | KeyRecord | ItemsRecord | EndRecord;

/** A file that is not a sidekiq-bridge export, or a damaged one. */
export class ExportFormatError extends Error {
  override name = "ExportFormatError";
}

/** Plain MessagePack out: maps, strings, bin, ints. */
export function newPackr(): Packr {
  return new Packr({ useRecords: false, variableMapSize: true, encodeUndefinedAsNil: true });
}

/** Plain MessagePack in; bin comes back as a Buffer of its own (copied out of the read chunk). */
export function newUnpackr(): Unpackr {
  return new Unpackr({ useRecords: false, mapsAsObjects: true, copyBuffers: true });
}

export const UNPACK_OPTIONS = {
  useRecords: false,
  mapsAsObjects: true,
  copyBuffers: true,
  maxIncompleteBufferSize: 1 << 30,
} as const;

/** Entries per `items` record, and bytes after which one is cut early. */
export const ITEMS_PER_RECORD = 5000;
export const BYTES_PER_RECORD = 4 * 1024 * 1024;

/** The score as the 8 bytes of its double (what Redis stores), for the digest. */
function scoreBytes(score: string): Buffer {
  const n = Number(score === "inf" || score === "+inf" ? Infinity : score === "-inf" ? -Infinity : score);
  if (Number.isNaN(n)) throw new ExportFormatError(`not a sorted-set score: ${JSON.stringify(score)}`);
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return b;
}

function lengthPrefixed(h: Hash, b: Buffer): void {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  h.update(len);
  h.update(b);
}

/**
 * SHA-256 of a key's entries (see the top of this file), fed chunk by chunk.
 * Items are flat as in the file (zset: member, score, ...; hash: field, value, ...).
 */
export class EntryDigest {
  private readonly h = createHash("sha256");
  /** Sets and hashes are hashed in sorted order, so they are kept until digest(). */
  private readonly held: Buffer[][] = [];
  private pending: Buffer | string | undefined;

  constructor(private readonly type: KeyType) {
    this.h.update(type);
  }

  add(items: ReadonlyArray<Buffer | string>): this {
    const buf = (x: Buffer | string) => (typeof x === "string" ? Buffer.from(x) : x);
    for (const x of items) {
      if (this.type === "zset" || this.type === "hash") {
        if (this.pending === undefined) {
          this.pending = x;
          continue;
        }
        const first = buf(this.pending);
        this.pending = undefined;
        if (this.type === "zset") {
          lengthPrefixed(this.h, first);
          this.h.update(scoreBytes(String(x)));
        } else this.held.push([first, buf(x)]);
      } else if (this.type === "set") this.held.push([buf(x)]);
      else lengthPrefixed(this.h, buf(x));
    }
    return this;
  }

  digest(): Buffer {
    if (this.pending !== undefined) throw new ExportFormatError(`a ${this.type} entry is missing its second half`);
    if (this.type === "set" || this.type === "hash") {
      this.held.sort((a, b) => Buffer.compare(a[0]!, b[0]!));
      for (const parts of this.held) for (const p of parts) lengthPrefixed(this.h, p);
    }
    return this.h.digest();
  }
}

/** The digest of a key's entries in one go. */
export function digestEntries(type: KeyType, items: ReadonlyArray<Buffer | string>): Buffer {
  return new EntryDigest(type).add(items).digest();
}

/** Entries in a flat item array (pairs count once). */
export function entryCount(type: KeyType, flatLength: number): number {
  return type === "zset" || type === "hash" ? flatLength / 2 : flatLength;
}

/** Splits a key's flat items into `items` records (pairs never split). */
export function itemRecords(type: KeyType, items: ReadonlyArray<Buffer | string>): ItemsRecord[] {
  const step = type === "zset" || type === "hash" ? 2 : 1;
  const out: ItemsRecord[] = [];
  let cur: Array<Buffer | string> = [];
  let bytes = 0;
  for (let i = 0; i < items.length; i += step) {
    for (let j = 0; j < step; j++) {
      const x = items[i + j]!;
      cur.push(x);
      bytes += x.length;
    }
    if (cur.length / step >= ITEMS_PER_RECORD || bytes >= BYTES_PER_RECORD) {
      out.push({ kind: "items", items: cur });
      cur = [];
      bytes = 0;
    }
  }
  if (cur.length > 0) out.push({ kind: "items", items: cur });
  return out;
}

/** Checks that a decoded value is one of our records, and narrows it. */
export function asRecord(v: unknown): ExportRecord {
  if (!v || typeof v !== "object") throw new ExportFormatError("not a sidekiq-bridge export record");
  const r = v as { kind?: unknown } & Record<string, unknown>;
  switch (r.kind) {
    case "header":
      if (r.format !== EXPORT_FORMAT)
        throw new ExportFormatError(`not a sidekiq-bridge export (format ${JSON.stringify(r.format)})`);
      if (r.version !== EXPORT_VERSION)
        throw new ExportFormatError(
          `export format version ${String(r.version)} is not supported (this build reads ${EXPORT_VERSION})`,
        );
      return r as unknown as ExportHeader;
    case "key":
      if (!Buffer.isBuffer(r.key) && typeof r.key !== "string") throw new ExportFormatError("key record without a key");
      if (!KEY_TYPES.includes(r.type as KeyType))
        throw new ExportFormatError(`unknown key type ${JSON.stringify(r.type)}`);
      if (!Number.isInteger(r.count) || (r.count as number) < 0)
        throw new ExportFormatError("key record without a count");
      if (!Buffer.isBuffer(r.digest)) throw new ExportFormatError("key record without a digest");
      if (typeof r.key === "string") r.key = Buffer.from(r.key);
      return r as unknown as KeyRecord;
    case "items":
      if (!Array.isArray(r.items)) throw new ExportFormatError("items record without items");
      return r as unknown as ItemsRecord;
    case "end":
      return r as unknown as EndRecord;
    default:
      throw new ExportFormatError(`unknown record kind ${JSON.stringify(r.kind)}`);
  }
}

/**
 * A Redis URL without user or password, for headers and messages: everything
 * between `://` and the last `@` goes (a password may hold `/`, `#` or `@`).
 */
export function redactUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/is.exec(url);
  if (!m) return url.includes("@") ? url.slice(url.lastIndexOf("@") + 1) : url;
  const rest = m[2]!;
  const at = rest.lastIndexOf("@");
  return at < 0 ? url : m[1]! + rest.slice(at + 1);
}
