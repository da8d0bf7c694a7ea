// The export file format: plain MessagePack records, raw bytes kept, digests
// independent of set/hash order and of how a Redis prints a score.
import { describe, expect, it } from "vitest";
import { decodeIter } from "msgpackr";
import {
  asRecord,
  digestEntries,
  EntryDigest,
  entryCount,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  ExportFormatError,
  itemRecords,
  ITEMS_PER_RECORD,
  newPackr,
  newUnpackr,
  redactUrl,
  UNPACK_OPTIONS,
  type ExportRecord,
} from "../../src/tools/migration/export-format.js";
import { maskUrl as maskRedisUrl, scrub } from "../../src/tools/cli/redis-url.js";

const bin = (s: string) => Buffer.from(s);

describe("export records", () => {
  it("round-trip through MessagePack with raw bytes intact (invalid UTF-8 too) and scores as strings", () => {
    const odd = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x7d]);
    const recs: ExportRecord[] = [
      {
        kind: "header",
        format: EXPORT_FORMAT,
        version: EXPORT_VERSION,
        createdAt: "2026-01-01T00:00:00.000Z",
        source: "redis://h:1/2",
        patterns: ["queue:*"],
      },
      {
        kind: "key",
        key: bin("dead"),
        type: "zset",
        count: 2,
        pttl: -1,
        digest: digestEntries("zset", [odd, "1795305964.1108546", bin('{"a":1.0}'), "1e+300"]),
      },
      { kind: "items", items: [odd, "1795305964.1108546", bin('{"a":1.0}'), "1e+300"] },
      { kind: "end", keys: 1, entries: 2 },
    ];
    const packr = newPackr();
    const bytes = Buffer.concat(recs.map((r) => packr.pack(r)));
    const back = newUnpackr().unpackMultiple(bytes).map(asRecord);
    expect(back).toHaveLength(4);
    const items = (back[2] as { items: Array<Buffer | string> }).items;
    expect(Buffer.isBuffer(items[0])).toBe(true);
    expect((items[0] as Buffer).equals(odd)).toBe(true);
    expect(items[1]).toBe("1795305964.1108546");
    expect(items[3]).toBe("1e+300");
    expect((back[1] as { digest: Buffer }).digest.equals(digestEntries("zset", items))).toBe(true);
  });

  it("streams: decodeIter reads records split across arbitrary chunks", async () => {
    const packr = newPackr();
    const big = Array.from({ length: 3000 }, (_, i) => bin(`{"jid":"${i}"}`));
    const bytes = Buffer.concat([
      packr.pack({
        kind: "key",
        key: bin("queue:a"),
        type: "list",
        count: big.length,
        pttl: -1,
        digest: digestEntries("list", big),
      }),
      ...itemRecords("list", big).map((r) => packr.pack(r)),
    ]);
    async function* chunked() {
      for (let i = 0; i < bytes.length; i += 777) yield bytes.subarray(i, i + 777);
    }
    const out: unknown[] = [];
    for await (const v of decodeIter(chunked(), UNPACK_OPTIONS) as AsyncIterable<unknown>) out.push(asRecord(v));
    const items = out.slice(1).flatMap((r) => (r as { items: Buffer[] }).items);
    expect(items.map(String)).toEqual(big.map(String));
  });

  it("splits items into records without ever splitting a pair", () => {
    const flat: Array<Buffer | string> = [];
    for (let i = 0; i < ITEMS_PER_RECORD + 3; i++) flat.push(bin(`m${i}`), String(i));
    const recs = itemRecords("zset", flat);
    expect(recs).toHaveLength(2);
    for (const r of recs) expect(r.items.length % 2).toBe(0);
    expect(entryCount("zset", flat.length)).toBe(ITEMS_PER_RECORD + 3);
    // A huge member cuts a record early.
    const huge = [Buffer.alloc(3 * 1024 * 1024), Buffer.alloc(3 * 1024 * 1024), bin("x")];
    expect(itemRecords("list", huge).map((r) => r.items.length)).toEqual([2, 1]);
  });

  it("refuses what is not ours, or a version it does not read", () => {
    expect(() => asRecord({ kind: "header", format: "other", version: 1 })).toThrow(ExportFormatError);
    expect(() => asRecord({ kind: "header", format: EXPORT_FORMAT, version: 99 })).toThrow(/version 99/);
    expect(() => asRecord({ kind: "key", key: bin("x"), type: "stream", count: 1, digest: bin("") })).toThrow(
      /unknown key type/,
    );
    expect(() => asRecord("hello")).toThrow(ExportFormatError);
  });
});

describe("digests", () => {
  it("do not depend on the order SMEMBERS or HGETALL happen to return", () => {
    expect(
      digestEntries("set", [bin("a"), bin("b"), bin("c")]).equals(digestEntries("set", [bin("c"), bin("a"), bin("b")])),
    ).toBe(true);
    expect(
      digestEntries("hash", [bin("f1"), bin("1"), bin("f2"), bin("2")]).equals(
        digestEntries("hash", [bin("f2"), bin("2"), bin("f1"), bin("1")]),
      ),
    ).toBe(true);
  });

  it("do depend on list order, on every byte, and on score values (not their spelling)", () => {
    expect(digestEntries("list", [bin("a"), bin("b")]).equals(digestEntries("list", [bin("b"), bin("a")]))).toBe(false);
    expect(digestEntries("list", [bin("ab")]).equals(digestEntries("list", [bin("a"), bin("b")]))).toBe(false);
    expect(digestEntries("zset", [bin("m"), "1.5"]).equals(digestEntries("zset", [bin("m"), "1.50"]))).toBe(true);
    expect(digestEntries("zset", [bin("m"), "1.5"]).equals(digestEntries("zset", [bin("m"), "1.6"]))).toBe(false);
    expect(digestEntries("zset", [bin("m"), "inf"]).equals(digestEntries("zset", [bin("m"), "+inf"]))).toBe(true);
  });

  it("are the same fed in chunks as in one go, pairs split across chunks included", () => {
    const flat = [bin("a"), "1", bin("b"), "2", bin("c"), "3"];
    const d = new EntryDigest("zset").add(flat.slice(0, 3)).add(flat.slice(3)).digest();
    expect(d.equals(digestEntries("zset", flat))).toBe(true);
    expect(() => new EntryDigest("zset").add([bin("a")]).digest()).toThrow(/second half/);
  });
});

describe("credentials", () => {
  it("never reach a header or a message", () => {
    expect(redactUrl("redis://user:s3cr%2Ft@host:6379/4")).toBe("redis://host:6379/4");
    expect(redactUrl("rediss://:p@ss/w#rd@host:6380/0")).toBe("rediss://host:6380/0");
    expect(redactUrl("redis://host:6379/0")).toBe("redis://host:6379/0");
    expect(maskRedisUrl("redis://:p@ss/w#rd@host:6380/0")).toBe("redis://***@host:6380/0");
    const url = "redis://admin:hunter2%21@db:6379/0";
    expect(scrub(`cannot reach ${url}: WRONGPASS for admin:hunter2%21 (hunter2!)`, url)).toBe(
      "cannot reach redis://***@db:6379/0: WRONGPASS for *** (***)",
    );
  });
});
