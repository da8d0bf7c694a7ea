// The public API is the documented one: docs/API.md (an index) and a page per
// entry point in docs/api/ are generated from the package's entry points
// (npm run api:docs), and the export map in
// package.json points at exactly those entry points' build.
import { readdirSync, readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import {
  collectApi,
  ENTRY_POINTS,
  limitProblems,
  NAME_LIMITS,
  renderApi,
  type Entry,
} from "../../scripts/api-report.js";

const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  exports: Record<string, Record<string, string> | string>;
};

describe("public API", () => {
  let api: Map<string, Entry[]>;
  beforeAll(() => {
    api = collectApi(); // one TypeScript program for every check
  }, 120_000);

  it("docs/API.md and docs/api/ are what npm run api:docs writes from the entry points (regenerate them when a public name changes)", () => {
    const pages = renderApi(api);
    for (const [path, text] of pages)
      expect(readFileSync(new URL(`../../docs/${path}`, import.meta.url), "utf8"), path).toBe(text);
    const written = readdirSync(new URL("../../docs/api/", import.meta.url)).map((f) => `api/${f}`);
    expect(written.sort()).toEqual([...pages.keys()].filter((p) => p !== "API.md").sort());
  }, 120_000);

  it(`the root exports at most ${NAME_LIMITS.root} names, and all entry points at most ${NAME_LIMITS.total} together`, () => {
    expect(limitProblems(api)).toEqual([]);
    const fake = new Map(api);
    fake.set(
      ENTRY_POINTS[0]!.subpath,
      Array.from({ length: NAME_LIMITS.root + 1 }, () => api.get("sidekiq-bridge")![0]!),
    );
    expect(limitProblems(fake)).toHaveLength(1);
    fake.set(
      "sidekiq-bridge/wire",
      Array.from({ length: NAME_LIMITS.total }, () => api.get("sidekiq-bridge")![0]!),
    );
    expect(limitProblems(fake)).toHaveLength(2);
  }, 120_000);

  it("every public name has TSDoc", () => {
    const undocumented = [...api].flatMap(([sub, entries]) =>
      entries.filter((e) => e.doc === "").map((e) => `${sub}: ${e.name}`),
    );
    expect(undocumented).toEqual([]);
  }, 120_000);

  it("each entry point is in the export map, with types, import, require and default conditions on its build", () => {
    const subpaths = Object.keys(pkg.exports).filter((k) => k !== "./package.json");
    expect(subpaths.map((s) => (s === "." ? "sidekiq-bridge" : `sidekiq-bridge/${s.slice(2)}`)).sort()).toEqual(
      ENTRY_POINTS.map((e) => e.subpath).sort(),
    );
    for (const e of ENTRY_POINTS) {
      const key = e.subpath === "sidekiq-bridge" ? "." : `./${e.subpath.slice("sidekiq-bridge/".length)}`;
      const js = `./${e.source.replace(/^src\//, "dist/").replace(/\.ts$/, ".js")}`;
      expect(pkg.exports[key]).toEqual({ types: js.replace(/\.js$/, ".d.ts"), import: js, require: js, default: js });
    }
  });

  it("no entry point exports a name the CHANGELOG lists as removed from it", () => {
    const changelog = readFileSync(new URL("../../CHANGELOG.md", import.meta.url), "utf8");
    const at = changelog.indexOf("## Unreleased");
    const unreleased = changelog.slice(at, changelog.indexOf("\n## ", at + 1));
    const from = unreleased.indexOf("### Removed");
    const removedSection = unreleased.slice(from, unreleased.indexOf("\n### ", from + 1));
    // "- `sidekiq-bridge/wire`:" then its items, "  - `A`, `B`: what to use instead."
    const groups = [...removedSection.matchAll(/^- `(sidekiq-bridge[a-z/-]*)`[^\n]*:\n((?: {2}[^\n]*\n)+)/gm)];
    expect(groups.map((g) => g[1])).toContain("sidekiq-bridge/wire");
    let listed = 0;
    for (const [, subpath, list] of groups) {
      const items = [...list!.matchAll(/^ {2}- ([\s\S]*?)(?=\n {2}- |\n?(?![\s\S]))/gm)];
      const names = items.flatMap((m) =>
        [...m[1]!.slice(0, m[1]!.indexOf(": ")).matchAll(/`(\w+)`/g)].map((n) => n[1]!),
      );
      listed += names.length;
      const there = new Set(api.get(subpath!)?.map((e) => e.name));
      expect(
        names.filter((n) => there.has(n)),
        subpath,
      ).toEqual([]);
    }
    expect(listed).toBeGreaterThan(100);
  }, 120_000);

  it("every name the CHANGELOG says moved out of the root is exported by the entry point it names, and no longer by the root", () => {
    const changelog = readFileSync(new URL("../../CHANGELOG.md", import.meta.url), "utf8");
    const moved = [...changelog.matchAll(/^ {2}- `(sidekiq-bridge\/[a-z-]+)`: (.+)\.$/gm)];
    expect(moved.length).toBeGreaterThan(0);
    const root = new Set(api.get("sidekiq-bridge")!.map((e) => e.name));
    for (const [, subpath, list] of moved) {
      const names = [...list!.matchAll(/`(\w+)`/g)].map((m) => m[1]!);
      const there = new Set(api.get(subpath!)?.map((e) => e.name));
      expect(
        names.filter((n) => !there.has(n)),
        subpath,
      ).toEqual([]);
      expect(
        names.filter((n) => root.has(n)),
        "still in the root",
      ).toEqual([]);
    }
  });
});
