// README stays a front door, and no doc points at a place that is not there:
// README is at most 250 lines and opens with the two commands a new user
// needs; every relative link of README.md, bench/README.md and docs/*.md names
// a file that exists and, with a #fragment into Markdown, a heading of it.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { documentationFiles, ROOT } from "./snippets.js";

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, "utf8").replace(/^```[\s\S]*?^```$/gm, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!)));
}

describe("the docs' shape and links", () => {
  it("README is a front door: at most 250 lines, the demo and the tests first", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.trimEnd().split("\n").length).toBeLessThanOrEqual(250);
    const first = readme.split("\n").slice(0, 25).join("\n");
    expect(first).toContain("npm ci && npm run demo");
    expect(first).toContain("npm ci && npm test");
  });

  it("every relative link names a file that exists, and a heading of it", () => {
    const broken: string[] = [];
    for (const doc of documentationFiles()) {
      const text = readFileSync(join(ROOT, doc), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [path, fragment] = target.split("#") as [string, string | undefined];
        const file = path === "" ? join(ROOT, doc) : join(ROOT, dirname(doc), path);
        if (!existsSync(file)) broken.push(`${doc}: ${target} (no ${relative(ROOT, file)})`);
        else if (fragment && file.endsWith(".md") && !anchorsOf(file).has(fragment))
          broken.push(`${doc}: ${target} (no heading #${fragment})`);
      }
    }
    expect(broken).toEqual([]);
  });
});
