import { describe, expect, it } from "vitest";
import { MAX_COUNT, pageCount, paging } from "../../src/tools/web/pagination.js";
import { entryKey, parseEntryKey } from "../../src/tools/web/set-entries.js";

describe("pagination", () => {
  it("turns page and count into a Redis range start", () => {
    expect(paging(new URLSearchParams(""))).toEqual({ page: 1, count: 25, offset: 0 });
    expect(paging(new URLSearchParams("page=3&count=50"))).toEqual({ page: 3, count: 50, offset: 100 });
    expect(paging(new URLSearchParams("page=2"), 100)).toEqual({ page: 2, count: 100, offset: 100 });
  });

  it("ignores nonsense and caps the page size", () => {
    for (const q of ["page=0", "page=-1", "page=abc", "page=1e9", "page=2.5"])
      expect(paging(new URLSearchParams(q)).page, q).toBe(1);
    expect(paging(new URLSearchParams("count=999999")).count).toBe(MAX_COUNT);
    expect(paging(new URLSearchParams("count=0")).count).toBe(25);
  });

  it("counts pages", () => {
    expect(pageCount(0, 25)).toBe(1);
    expect(pageCount(25, 25)).toBe(1);
    expect(pageCount(26, 25)).toBe(2);
    expect(pageCount(100_000, 25)).toBe(4000);
  });
});

describe("sorted-set entry keys", () => {
  it("round-trips the score as Redis gave it and the jid", () => {
    const key = entryKey({ score: "1763937000.1234567", jid: "abc-def" });
    expect(key).toBe("1763937000.1234567-abc-def");
    expect(parseEntryKey(key)).toEqual({ score: "1763937000.1234567", jid: "abc-def" });
    expect(parseEntryKey("1.5e+9-x")).toEqual({ score: "1.5e+9", jid: "x" });
    expect(parseEntryKey("17-")).toEqual({ score: "17", jid: "" });
    expect(parseEntryKey("nope")).toBeUndefined();
  });
});
