// Pure logic of `migrate move`: which payloads move, and that only `queue` changes.
import { describe, expect, it } from "vitest";
import { rewriteForMove } from "../../src/tools/migration/move.js";
import { JobRecord } from "../../src/core/wire/index.js";

const o = { from: "b", to: "b-node", classes: ["X"] };

describe("rewriteForMove", () => {
  it("changes `queue` in place and keeps every other byte (big integers, 1.0, key order, unknown keys)", () => {
    const raw =
      '{"retry":true,"queue":"b","class":"X","args":[18446744073709551617,1.0,"é"],"jid":"j1","zz":{"k":[]},"created_at":1795305964109}';
    const r = rewriteForMove(Buffer.from(raw), o, true)!;
    expect(r.className).toBe("X");
    expect(r.raw).toBe(raw.replace('"queue":"b"', '"queue":"b-node"'));
  });

  it("selects by class, by `wrapped` for ActiveJob, and by the entry's queue in sets", () => {
    expect(rewriteForMove(Buffer.from('{"queue":"b","class":"Y"}'), o, true)).toBeUndefined();
    expect(rewriteForMove(Buffer.from('{"queue":"c","class":"X"}'), o, true)).toBeUndefined();
    // In the queue's own list the entry's `queue` member does not decide.
    expect(rewriteForMove(Buffer.from('{"queue":"c","class":"X"}'), o, false)?.raw).toBe(
      '{"queue":"b-node","class":"X"}',
    );
    const aj = '{"class":"Sidekiq::ActiveJob::Wrapper","wrapped":"X","queue":"b","args":[{}]}';
    expect(rewriteForMove(Buffer.from(aj), o, true)?.className).toBe("X");
    expect(rewriteForMove(Buffer.from(aj.replace('"wrapped":"X"', '"wrapped":"Z"')), o, true)).toBeUndefined();
  });

  it("moves every job without a class list, adds `queue` when missing, and skips what is not a job", () => {
    const all = { from: "b", to: "n" };
    expect(rewriteForMove(Buffer.from('{"class":"Q","args":[]}'), all, false)?.raw).toBe(
      '{"class":"Q","args":[],"queue":"n"}',
    );
    expect(rewriteForMove(Buffer.from("garbage"), all, false)).toBeUndefined();
    expect(rewriteForMove(Buffer.from('{"args":[]}'), all, false)).toBeUndefined();
    expect(rewriteForMove(Buffer.from([0x7b, 0xff, 0x7d]), all, false)).toBeUndefined();
    expect(
      JobRecord.parse(rewriteForMove(Buffer.from('{"class":"Q","queue":"b"}'), all, true)!.raw).getString("queue"),
    ).toBe("n");
  });
});
