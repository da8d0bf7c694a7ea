// The docs cannot drift from the code: every TypeScript and JavaScript block of
// README.md, bench/README.md and docs/*.md (but the generated docs/API.md) is
// type-checked against the package's public entry points, all in one program
// (test/docs/snippets.ts has the rules). A block that uses a name the package
// does not export, or passes the wrong arguments, fails here with its file
// and line.
import { beforeAll, describe, expect, it } from "vitest";
import {
  allBlocks,
  checkBlocks,
  excerptMismatches,
  extractBlocks,
  type Block,
  type Checked,
  where,
} from "./snippets.js";

/** At most this many blocks may be left unchecked, each saying why in its fence. */
const MAX_UNCHECKED = 2;

/** Two blocks that must fail, checked in the same program as the docs: the check is not a no-op. */
const BROKEN = extractBlocks(
  "(broken on purpose)",
  [
    "```ts",
    'import { NoSuchExport } from "sidekiq-bridge";',
    "console.log(NoSuchExport);",
    "```",
    "```ts",
    'import { Client } from "sidekiq-bridge";',
    'const client = new Client({ redis: "redis://127.0.0.1:6379/0", dialect: 8 });',
    'await client.job("HardJob").performIn("soon", 1);',
    "```",
    "```ts assumes=worker",
    'worker.register("HardJob", async () => {}, { retryIn: "ten" });',
    "```",
  ].join("\n"),
);

let docs: Block[];
let checked: Checked[];

beforeAll(() => {
  docs = allBlocks();
  const results = checkBlocks([...docs, ...BROKEN]);
  checked = results.slice(0, docs.length);
  broken = results.slice(docs.length);
}, 120_000);
let broken: Checked[];

describe("documentation snippets", () => {
  it("type-check against the public API", () => {
    const problems = checked
      .filter((c) => !c.block.attrs.has("no-check") && !c.block.attrs.has("excerpt"))
      .flatMap((c) => c.problems);
    expect(problems).toEqual([]);
  });

  it("are found in README, bench/README and the guides", () => {
    const files = new Set(docs.map((b) => b.file));
    for (const f of ["README.md", "docs/WEB.md", "docs/MIGRATION.md", "docs/OBSERVABILITY.md"])
      expect(files, f).toContain(f);
    expect(docs.length).toBeGreaterThanOrEqual(20);
  });

  it("that quote source (excerpt=path) hold its lines, in its order", () => {
    const excerpts = docs.filter((b) => b.attrs.has("excerpt"));
    expect(excerpts.length).toBeGreaterThanOrEqual(3);
    const drift = excerpts.flatMap((b) =>
      excerptMismatches(b.code, b.attrs.get("excerpt")!).map(
        (l) => `${where(b)}: not in ${b.attrs.get("excerpt")}: ${l}`,
      ),
    );
    expect(drift).toEqual([]);
    expect(
      excerptMismatches("export class Slots {\n// ...\n  get running(): number {", "src/core/server/fetch/slots.ts"),
    ).toEqual([]);
    expect(
      excerptMismatches("  get running(): number {\nexport class Slots {", "src/core/server/fetch/slots.ts"),
    ).toEqual(["export class Slots {"]);
  });

  it(`leave at most ${MAX_UNCHECKED} blocks unchecked, each with its reason`, () => {
    const unchecked = docs.filter((b) => b.attrs.has("no-check"));
    for (const b of unchecked)
      expect(b.attrs.get("no-check")!.trim(), `${where(b)}: no-check without a reason`).not.toBe("");
    expect(unchecked.map(where).length, unchecked.map(where).join(", ")).toBeLessThanOrEqual(MAX_UNCHECKED);
  });

  it("assume only names they use", () => {
    const unused = docs.flatMap((b) =>
      (b.attrs.get("assumes") ?? "")
        .split(",")
        .filter((n) => n !== "" && !new RegExp(`\\b${n}\\b`).test(b.code))
        .map((n) => `${where(b)}: assumes ${n} but does not use it`),
    );
    expect(unused).toEqual([]);
  });

  it("catch a name the package does not export and wrong arguments", () => {
    const [missing, wrongArgs, wrongOption] = broken.map((c) => c.problems.join("\n"));
    expect(missing).toMatch(/TS2305 .*NoSuchExport/);
    expect(wrongArgs).toMatch(/TS2345 Argument of type 'string' is not assignable to parameter of type 'number/);
    expect(wrongOption).toMatch(/TS2322 .*retryIn|TS2322/);
  });
});
