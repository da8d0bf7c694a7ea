// The relative links of Markdown files, checked against a tree: this
// repository (links.test.ts) or the installed package (the package-consumers
// interop test), so a link that works in the checkout but names a file the
// tarball leaves out is caught too.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

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
  const headings = [...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1]!));
  // Generated pages (docs/api) name their anchors in HTML: <a id="sidekiq-bridge-worker"></a>.
  const ids = [...text.matchAll(/<a id="([^"]+)"/g)].map((m) => m[1]!);
  return new Set([...headings, ...ids]);
}

/**
 * Every relative link of `docs` (paths under `root`) that names no file under
 * `root` (a path out of `root` counts as none), or, with a #fragment into
 * Markdown, no heading or `<a id>` of it; one line each.
 */
export function brokenLinks(root: string, docs: string[]): string[] {
  const broken: string[] = [];
  for (const doc of docs) {
    const text = readFileSync(join(root, doc), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/.test(target)) continue;
      const [path, fragment] = target.split("#") as [string, string | undefined];
      const file = path === "" ? join(root, doc) : join(root, dirname(doc), path);
      // In node_modules a file beside the package may exist and still not be the package's.
      if (relative(root, file).startsWith("..")) broken.push(`${doc}: ${target} (outside ${root})`);
      else if (!existsSync(file)) broken.push(`${doc}: ${target} (no ${relative(root, file)})`);
      else if (fragment && file.endsWith(".md") && !anchorsOf(file).has(fragment))
        broken.push(`${doc}: ${target} (no heading #${fragment})`);
    }
  }
  return broken;
}
