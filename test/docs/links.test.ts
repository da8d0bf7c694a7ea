// README stays a front door, and no doc points at a place that is not there:
// README is at most 250 lines and opens with the two commands a new user
// needs; every relative link of README.md, bench/README.md and docs/*.md names
// a file that exists and, with a #fragment into Markdown, a heading of it.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { brokenLinks } from "./links.js";
import { documentationFiles, ROOT } from "./snippets.js";

describe("the docs' shape and links", () => {
  it("README is a front door: at most 250 lines, the demo and the tests first", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(250);
    const first = readme.split("\n").slice(0, 25).join("\n");
    expect(first).toContain("npm ci && npm run demo");
    expect(first).toContain("npm ci && npm test");
  });

  it("finds a link to a missing file, one to a missing heading and one out of the tree, and passes URLs and good links", () => {
    const outer = mkdtempSync(join(tmpdir(), "links-"));
    const root = join(outer, "package");
    try {
      mkdirSync(join(root, "docs"), { recursive: true });
      writeFileSync(join(root, "docs/A.md"), '# A page\n\n## How it stops\n\n<a id="a-worker"></a>\n');
      writeFileSync(join(outer, "C.md"), "# Beside the tree\n");
      const readme =
        "[a](docs/A.md#how-it-stops) [a2](docs/A.md#a-worker) [b](docs/B.md) [c](docs/A.md#nowhere) [d](https://example.com/x.md) [e](../C.md)";
      writeFileSync(join(root, "README.md"), readme);
      expect(brokenLinks(root, ["README.md"])).toEqual([
        "README.md: docs/B.md (no docs/B.md)",
        "README.md: docs/A.md#nowhere (no heading #nowhere)",
        `README.md: ../C.md (outside ${root})`,
      ]);
    } finally {
      rmSync(outer, { recursive: true, force: true });
    }
  });

  it("every relative link names a file that exists, and a heading of it", () => {
    expect(brokenLinks(ROOT, documentationFiles())).toEqual([]);
  });
});
