import { describe, expect, it } from "vitest";
import { execReplies } from "../../src/core/redis/replies.js";

describe("execReplies (the one pipeline/MULTI reply check)", () => {
  it("returns the values in command order", () => {
    expect(
      execReplies(
        [
          [null, 1],
          [null, "OK"],
        ],
        "flush",
      ),
    ).toEqual([1, "OK"]);
  });

  it("throws the first command's own error", () => {
    const wrongType = new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    expect(() =>
      execReplies(
        [
          [null, 1],
          [wrongType, null],
          [new Error("later"), null],
        ],
        "flush",
      ),
    ).toThrow(wrongType);
  });

  it("names what was being written when the transaction was discarded", () => {
    expect(() => execReplies(null, "heartbeat")).toThrow("heartbeat: the transaction was discarded");
  });
});
