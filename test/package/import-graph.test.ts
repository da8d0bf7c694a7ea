// The shape of src/ as its imports draw it: no import cycle, a server core
// that plugs add-ons in through its seams instead of importing them, and a
// wire layer that stands on nothing else. Every import counts: `import type`,
// `export … from` and `import("…")` in a type, since a cycle of types still
// ties the modules together for a reader and for the compiler.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The gems' add-ons: entries of src/assembly/registry.ts, reached by everything else only through it. */
const GEM_ADD_ONS = [
  "src/addons/sidekiq-cron",
  "src/addons/sidekiq-unique-jobs",
  "src/addons/sidekiq-scheduler",
  "src/addons/sidekiq-throttled",
];
/**
 * What else plugs into the server through its seams (middleware, handlers,
 * services, events): metrics and tracing (tools), and Sidekiq's own
 * IterableJob, which the worker wires.
 */
const PLUGGED_IN = ["src/core/iterable", "src/tools/metrics", "src/tools/tracing"];
/** The layers that use add-ons: they reach them through the registry alone. */
const THROUGH_THE_REGISTRY = ["src/tools/web", "src/tools/cli", "src/tools/migration", "src/core/worker"];
/** Layers above the server: the composition root src/core/worker/ sits above it and assembles it with the add-ons; the API, migration, dashboard and CLI use it. */
const UPPER_LAYERS = ["src/tools/web", "src/tools/cli", "src/tools/migration", "src/core/worker", "src/core/api"];
/** What src/core/server/ must not import. */
const SERVER_MUST_NOT_IMPORT = [...GEM_ADD_ONS, ...PLUGGED_IN, ...UPPER_LAYERS];

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One import of one src/ file by another, where it is written. */
export interface ImportEdge {
  from: string;
  to: string;
  line: number;
}

/** Every relative import of a module's text, as written (the scanner skips comments and strings). */
export function importSpecifiers(text: string): Array<{ specifier: string; line: number }> {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((f) => ({ specifier: f.fileName, line: text.slice(0, f.pos).split("\n").length }))
    .filter((f) => f.specifier.startsWith("."));
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return tsFiles(path);
      return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
    });
}

/** The import graph of src/: one edge per import of one src/ file by another (paths relative to the repository). */
export function srcImportGraph(root = ROOT): ImportEdge[] {
  const edges: ImportEdge[] = [];
  const files = new Set(tsFiles(join(root, "src")).map((f) => relative(root, f)));
  for (const from of [...files].sort()) {
    for (const { specifier, line } of importSpecifiers(readFileSync(join(root, from), "utf8"))) {
      // NodeNext spells a .ts module as .js (and .mts as .mjs).
      const to = join(dirname(from), specifier)
        .replace(/\.js$/, ".ts")
        .replace(/\.mjs$/, ".mts");
      if (files.has(to)) edges.push({ from, to, line });
    }
  }
  return edges;
}

/**
 * The import cycles, each as a path `a.ts:3 → b.ts:7 → a.ts` (each module with
 * the line of its import of the next): for each import that lies on a cycle,
 * the shortest cycle through it (one per distinct cycle), so every import to
 * break is named at least once.
 */
export function importCycles(edges: readonly ImportEdge[]): string[] {
  const next = new Map<string, Set<string>>();
  const lineOf = new Map<string, number>();
  for (const e of edges) {
    if (!lineOf.has(`${e.from} ${e.to}`)) lineOf.set(`${e.from} ${e.to}`, e.line);
    if (!next.has(e.from)) next.set(e.from, new Set());
    next.get(e.from)!.add(e.to);
  }
  /** The shortest path from a to b (inclusive), or undefined. */
  const path = (a: string, b: string): string[] | undefined => {
    const prev = new Map<string, string>([[a, a]]);
    const queue = [a];
    for (let i = 0; i < queue.length; i++) {
      const u = queue[i]!;
      if (u === b) {
        const out = [b];
        while (out[0] !== a) out.unshift(prev.get(out[0]!)!);
        return out;
      }
      for (const v of [...(next.get(u) ?? [])].sort())
        if (!prev.has(v)) {
          prev.set(v, u);
          queue.push(v);
        }
    }
    return undefined;
  };
  const cycles = new Map<string, string[]>();
  for (const [from, tos] of [...next].sort(([a], [b]) => a.localeCompare(b))) {
    for (const to of [...tos].sort()) {
      const back = path(to, from);
      if (!back) continue;
      const cycle = [from, ...back]; // from → to → … → from
      const ring = cycle.slice(0, -1);
      // One spelling per cycle: start at its smallest module.
      const start = ring.indexOf([...ring].sort()[0]!);
      const canonical = [...ring.slice(start), ...ring.slice(0, start), ring[start]!];
      const spelled = canonical.map((m, i) => (i < ring.length ? `${m}:${lineOf.get(`${m} ${canonical[i + 1]}`)}` : m));
      cycles.set(spelled.join(" → "), canonical);
    }
  }
  return [...cycles.keys()].sort();
}

const under = (file: string, folder: string) => file.startsWith(`${folder}/`);
const edgeText = (e: ImportEdge) => `${e.from}:${e.line} → ${e.to}`;

describe("the import graph of src/", () => {
  const edges = srcImportGraph();

  it("sees every form of import: import type, export … from, import() in a type and in code, side effects", () => {
    const text = [
      'import type { A } from "./a.js";',
      'import { B } from "../b.js";',
      'export { C } from "./c.js";',
      'export * from "./d.js";',
      'export type { E } from "./e.js";',
      'let f: import("./f.js").F;',
      'type G = typeof import("./g.js");',
      'const h = await import("./h.js");',
      'import "./i.js";',
      'import { Redis } from "ioredis";',
      '// import("./not-a.js")',
      "const s = \"import('./not-b.js')\";",
    ].join("\n");
    expect(importSpecifiers(text)).toEqual(
      ["./a.js", "../b.js", "./c.js", "./d.js", "./e.js", "./f.js", "./g.js", "./h.js", "./i.js"].map((s, i) => ({
        specifier: s,
        line: i + 1,
      })),
    );
    expect(importCycles([])).toEqual([]);
    expect(
      importCycles([
        { from: "b", to: "a", line: 1 },
        { from: "a", to: "b", line: 1 },
        { from: "b", to: "c", line: 2 },
        { from: "c", to: "a", line: 1 },
        { from: "c", to: "d", line: 2 },
      ]),
    ).toEqual(["a:1 → b:1 → a", "a:1 → b:2 → c:1 → a"]);
    expect(edges.length).toBeGreaterThan(500);
  });

  it("has no import cycle, type imports included", () => {
    const cycles = importCycles(edges);
    expect(cycles, `import cycles in src/ (break each):\n${cycles.join("\n")}`).toEqual([]);
  });

  it("src/core/server/ imports no add-on and no layer above it (add-ons plug in through its seams; src/core/worker/ assembles them)", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/server") && SERVER_MUST_NOT_IMPORT.some((f) => under(e.to, f)))
      .map(edgeText);
    expect(offending, `src/core/server/ imports what it must not:\n${offending.join("\n")}`).toEqual([]);
  });

  it("the dashboard, the CLI, the migration tools and the worker reach the gems' add-ons only through the registry", () => {
    const offending = edges
      .filter((e) => THROUGH_THE_REGISTRY.some((f) => under(e.from, f)) && GEM_ADD_ONS.some((f) => under(e.to, f)))
      .map(edgeText);
    expect(offending, `add-ons imported past the registry:\n${offending.join("\n")}`).toEqual([]);
  });

  it("src/core/logging/ imports nothing from src/core/server/: the job logger only logs (the server's job watch calls it)", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/logging") && under(e.to, "src/core/server"))
      .map(edgeText);
    expect(offending, `src/core/logging/ imports the server:\n${offending.join("\n")}`).toEqual([]);
  });

  it("src/core/wire/ imports nothing outside src/core/wire/ (the ground layer)", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/wire") && !under(e.to, "src/core/wire"))
      .map(edgeText);
    expect(offending, `src/core/wire/ imports from other layers:\n${offending.join("\n")}`).toEqual([]);
  });
});
