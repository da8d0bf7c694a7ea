// contract pull's handling of the Ruby command, with stand-ins for Ruby (the
// real extractor runs against real Ruby in interop-tests/contract.test.ts).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PULL_SCRIPT, pullContract } from "../../src/tools/contract/pull.js";

const doc = JSON.stringify({ contract: 1, app: "x", classes: { A: { kind: "sidekiq", params: [] } } });

describe("contract pull", () => {
  it("the extractor ships with the package", () => {
    expect(existsSync(PULL_SCRIPT)).toBe(true);
    const files = (
      JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")) as { files: string[] }
    ).files;
    expect(files).toEqual(expect.arrayContaining(["ruby", "schema/contract"]));
  });

  it("pipes the script to the command, appends the arguments, reads the marked line and the notes", async () => {
    const notes: string[] = [];
    // A stand-in for `ruby -`: says what it read and got, then prints a contract after some noise.
    const ruby = `f() { echo "contract pull: read $(head -1 | cut -c1-30); args $*" >&2; cat >/dev/null; echo noise; echo '__SIDEKIQ_BRIDGE_CONTRACT__ ${doc}'; }; f`;
    const r = await pullContract({ ruby, app: "x", sig: ["sig dir"], files: ["a.rb"], onNote: (l) => notes.push(l) });
    expect(r.contract.app).toBe("x");
    expect(r.notes).toEqual(["read # sidekiq-bridge's contract ex; args --app x --sig sig dir a.rb"]);
    expect(notes).toEqual([`contract pull: ${r.notes[0]}`]);
  });

  it("puts the script's path in place of {script}", async () => {
    const r = await pullContract({ ruby: `test -f {script} && echo '__SIDEKIQ_BRIDGE_CONTRACT__ ${doc}' #` });
    expect(Object.keys(r.contract.classes)).toEqual(["A"]);
  });

  it("says what went wrong: a failing command, no contract, a bad contract", async () => {
    await expect(pullContract({ ruby: "echo 'cannot load such file -- rails' >&2; exit 3" })).rejects.toThrow(
      /the Ruby command exited 3: .*\ncannot load such file -- rails/,
    );
    await expect(pullContract({ ruby: "cat >/dev/null; echo hello" })).rejects.toThrow(/printed no contract/);
    await expect(
      pullContract({ ruby: `cat >/dev/null; echo '__SIDEKIQ_BRIDGE_CONTRACT__ {"contract":1,"app":"x"}'` }),
    ).rejects.toThrow(/the extracted contract is not a valid contract: \(root\) must have required property 'classes'/);
  });
});
