// Every repository path that the docs and the source comments name exists
// (what counts as one: test/docs/paths.ts). Each missing one is printed with
// the file and line that name it.
//
// Read: README.md and every Markdown file under docs/ (the generated API pages
// too: their text is the TSDoc of src/), harness/, schema/ and bench/ but its
// results; the comments of every TypeScript and JavaScript file under src/,
// test/, interop-tests/, bench/, chaos/, scripts/, harness/ and .ci/.
// Not read, because they are history: CHANGELOG.md, whose entries say what
// each release changed in the tree of that release, and bench/results/, each
// a report of a run on the tree of its day (a file's path before a move).
// Rewriting the paths they name would make them wrong about their own
// release or run.
import { describe, expect, it } from "vitest";
import { filesUnder, missingInComments, missingInMarkdown, type NamedPath, read, readTree } from "./paths.js";

const tree = readTree();
const shown = (m: NamedPath[]) => m.map((p) => `${p.file}:${p.line}: ${p.path}`);

/** Paths in the reader's own project, which the docs' commands write: never ours. */
const READERS_PROJECT = new Set(["src/sidekiq-contract.ts"]);

describe("the paths the docs and the comments name", () => {
  it("finds a missing path, and only a path of this repository", () => {
    const text = [
      "The launcher (`src/core/server/launcher.ts`) and `src/core/server/nowhere.ts`,",
      "see docs/OPERATING.md and docs/NOWHERE.md; `src/addons/` and `src/nowhere/`.",
      "Sidekiq's lib/sidekiq/fetch.rb, redis_client.rb:421 and Changes.md are not ours; fetch.ts is, worker-flags.ts was.",
      "The tabs: `sidekiq-cron/web` (`cron/web` moved), addons/pollers/claims.ts (addon/claims.ts moved).",
      "Tests: `interop-tests/swarm.test.ts`, chaos/unique-lock-*.ts, `src/tools/cli/<name>-command.ts`,",
      "`src/addons/sidekiq-{cron,nothing}/addon.ts`, https://example.com/src/x.ts, node:fs/promises, a.ts.",
      "Entry points: `sidekiq-bridge/web`, `sidekiq-bridge/nothing`; cron `0-59/2`, `app/workers`.",
    ].join("\n");
    expect(shown(missingInMarkdown("docs/EXAMPLE.md", text, tree))).toEqual([
      "docs/EXAMPLE.md:1: src/core/server/nowhere.ts",
      "docs/EXAMPLE.md:2: src/nowhere/",
      "docs/EXAMPLE.md:2: docs/NOWHERE.md",
      "docs/EXAMPLE.md:3: worker-flags.ts",
      "docs/EXAMPLE.md:4: cron/web",
      "docs/EXAMPLE.md:4: addon/claims.ts",
      "docs/EXAMPLE.md:6: src/addons/sidekiq-{cron,nothing}/addon.ts",
      "docs/EXAMPLE.md:7: sidekiq-bridge/nothing",
    ]);
  });

  it("reads comments, not strings or templates", () => {
    const source = [
      "// The fetcher (fetch.ts, ./launcher.ts) and ../wire/keys.ts; not ./gone.ts; ../peers/README.md.",
      'const s = "src/core/server/not-a-comment.ts";',
      "/** Moved: `cron/audit.ts`. */",
      "export const t = `src/also-a-string.ts ${s}`; // trailing: src/core/server/gone/",
      "function f() {",
      "  return /src\\/regex.ts/.test(s) ? `src/template.ts` : f(); // src/core/server/launcher.ts",
      "  // before the brace: src/core/server/also-gone.ts",
      "}",
    ].join("\n");
    expect(shown(missingInComments("src/core/server/example.ts", source, tree))).toEqual([
      "src/core/server/example.ts:1: ./gone.ts",
      "src/core/server/example.ts:3: cron/audit.ts",
      "src/core/server/example.ts:4: src/core/server/gone/",
      "src/core/server/example.ts:7: src/core/server/also-gone.ts",
    ]);
  });

  it("every path named in the docs exists", () => {
    const docs = [
      "README.md",
      ...filesUnder(tree, ["docs", "bench", "harness", "schema"], /\.md$/).filter(
        (f) => !f.startsWith("bench/results/"),
      ),
    ];
    const missing = docs
      .flatMap((f) => missingInMarkdown(f, read(f), tree))
      .filter((p) => !READERS_PROJECT.has(p.path));
    expect(shown(missing)).toEqual([]);
  });

  it("every path named in a source comment exists", () => {
    const sources = filesUnder(
      tree,
      ["src", "test", "interop-tests", "bench", "chaos", "scripts", "harness", ".ci"],
      /\.(?:ts|mts|js|mjs)$/,
    );
    const missing = sources.flatMap((f) => missingInComments(f, read(f), tree));
    expect(shown(missing)).toEqual([]);
  }, 30_000); // about 600 files: a second alone, several on a busy machine

  it("the walk of one job in docs/ARCHITECTURE.md names each file once, by its path", () => {
    const doc = read("docs/ARCHITECTURE.md");
    const start = doc.indexOf("\n## One job, from push to acknowledgement\n");
    expect(start).toBeGreaterThan(0);
    const walk = doc.slice(start + 1, doc.indexOf("\n## ", start + 1));
    const spans = [...walk.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const files = spans.filter((s) => /^[\w.-]+(?:\/[\w.-]+)*\.ts$/.test(s));
    expect(files.filter((f) => !f.includes("/"))).toEqual([]);
    expect(files.filter((f, i) => files.indexOf(f) !== i)).toEqual([]);
    expect(files.length).toBeGreaterThanOrEqual(20);
  });
});
