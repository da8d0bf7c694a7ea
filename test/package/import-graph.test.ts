// The shape of src/ as its imports draw it: four layers, each a folder, each
// importing only the layers below it (docs/ARCHITECTURE.md, "Folders"):
//   core      src/core/       what Sidekiq itself is: wire, redis, client, server, api...
//   tools     src/tools/      built on the core: cli, web, migration, contract, metrics, tracing
//   add-ons   src/addons/     the gems; of the tools, only each tool's extension.ts
//   assembly  src/assembly/   the one place that knows every add-on (and src/index.ts)
// Every folder of src/ that holds a module belongs to a unit below, or the
// test fails; inside the core, finer rules (the server's, the wire's, the
// logger's) keep holding. No import cycle either. Every import counts:
// `import type`, `export … from` and `import("…")` in a type, since a cycle or
// a leak of types still ties the modules together for a reader and for the
// compiler.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/** The layers, lowest first: a module imports from its own layer and those below it. */
export const LAYERS = ["core", "tools", "addons", "assembly"] as const;
export type Layer = (typeof LAYERS)[number];

/**
 * Each unit of src/ and its layer: a folder with its subfolders, or, marked
 * `shallow`, the modules directly in it alone (a new folder under src/addons/
 * is a new add-on, declared here).
 */
export const UNITS: ReadonlyArray<{ folder: string; layer: Layer; shallow?: boolean }> = [
  { folder: "src/core/wire", layer: "core" },
  { folder: "src/core/redis", layer: "core" },
  { folder: "src/core/client", layer: "core" },
  { folder: "src/core/contract", layer: "core" },
  { folder: "src/core/config", layer: "core" },
  { folder: "src/core/logging", layer: "core" },
  { folder: "src/core/middleware", layer: "core" },
  { folder: "src/core/server", layer: "core" },
  { folder: "src/core/api", layer: "core" },
  { folder: "src/core/iterable", layer: "core" },
  { folder: "src/tools/cli", layer: "tools" },
  { folder: "src/tools/web", layer: "tools" },
  { folder: "src/tools/migration", layer: "tools" },
  { folder: "src/tools/contract", layer: "tools" },
  { folder: "src/tools/metrics", layer: "tools" },
  { folder: "src/tools/tracing", layer: "tools" },
  { folder: "src/addons", layer: "addons", shallow: true },
  { folder: "src/addons/sidekiq-cron", layer: "addons" },
  { folder: "src/addons/sidekiq-unique-jobs", layer: "addons" },
  { folder: "src/addons/sidekiq-scheduler", layer: "addons" },
  { folder: "src/addons/sidekiq-throttled", layer: "addons" },
  { folder: "src/addons/sidekiq-pro-batches", layer: "addons" },
  { folder: "src/addons/fugit", layer: "addons" },
  { folder: "src/addons/pollers", layer: "addons" },
  { folder: "src/assembly", layer: "assembly" },
  // sidekiq-bridge/testing: drain runs a Worker's handlers, so it stands on the top layer.
  { folder: "src/testing", layer: "assembly" },
  // The root entry (src/index.ts) exports the Worker: it stands on the top layer.
  { folder: "src", layer: "assembly", shallow: true },
];

/** What src/core/server/ may import besides itself: add-ons plug in through its seams, the API and the tools stand on it. */
const SERVER_MAY_IMPORT = [
  "src/core/wire",
  "src/core/redis",
  "src/core/client",
  "src/core/contract",
  "src/core/config",
  "src/core/logging",
  "src/core/middleware",
];

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

/** The unit of src/ a module belongs to (its folder's, or the nearest declared folder above it), or undefined. */
export function unitOf(file: string, units = UNITS): (typeof UNITS)[number] | undefined {
  const dir = dirname(file);
  let best: (typeof UNITS)[number] | undefined;
  for (const u of units) {
    const inside = u.shallow ? dir === u.folder : dir === u.folder || dir.startsWith(`${u.folder}/`);
    if (inside && (!best || u.folder.length > best.folder.length)) best = u;
  }
  return best;
}

/** The folders of these modules that belong to no declared unit (each one to declare in UNITS, with its layer). */
export function undeclaredFolders(files: readonly string[], units = UNITS): string[] {
  return [...new Set(files.filter((f) => !unitOf(f, units)).map((f) => dirname(f)))].sort();
}

/** The imports of src/core/server/ of anything but itself and SERVER_MAY_IMPORT. */
export function serverViolations(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter(
      (e) =>
        under(e.from, "src/core/server") &&
        !under(e.to, "src/core/server") &&
        !SERVER_MAY_IMPORT.some((f) => under(e.to, f)),
    )
    .map(edgeText);
}

/**
 * The imports that break the layers, each with the rule it breaks: an import
 * of a higher layer; an add-on's import of a tool module other than the tool's
 * extension.ts.
 */
export function layerViolations(edges: readonly ImportEdge[], units = UNITS): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const from = unitOf(e.from, units);
    const to = unitOf(e.to, units);
    if (!from || !to) continue; // named by undeclaredFolders
    if (LAYERS.indexOf(to.layer) > LAYERS.indexOf(from.layer))
      out.push(`${edgeText(e)}: ${from.layer} imports ${to.layer}, a layer above it`);
    else if (from.layer === "addons" && to.layer === "tools" && !/^src\/tools\/[^/]+\/extension\.ts$/.test(e.to))
      out.push(`${edgeText(e)}: an add-on imports a tool's internals (only src/tools/<tool>/extension.ts)`);
  }
  return out;
}

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

  it("declares a layer for every folder of src/ that holds a module", () => {
    const files = tsFiles(join(ROOT, "src")).map((f) => relative(ROOT, f));
    const missing = undeclaredFolders(files);
    expect(missing, `folders of src/ with no layer (declare each in UNITS):\n${missing.join("\n")}`).toEqual([]);
  });

  it("each layer imports only itself and the layers below it; add-ons reach a tool only through its extension.ts", () => {
    const offending = layerViolations(edges);
    expect(offending, `imports that break the layers:\n${offending.join("\n")}`).toEqual([]);
  });

  it("the layer rules catch what they must (fake edges)", () => {
    const edge = (from: string, to: string) => ({ from, to, line: 1 });
    expect(
      layerViolations([
        edge("src/core/client/client.ts", "src/tools/contract/document.ts"),
        edge("src/core/server/types.ts", "src/addons/addon.ts"),
        edge("src/core/iterable/iterable.ts", "src/assembly/registry.ts"),
        edge("src/tools/web/handler.ts", "src/assembly/registry.ts"),
        edge("src/tools/migration/audit.ts", "src/addons/sidekiq-cron/audit.ts"),
        edge("src/addons/sidekiq-cron/cli-command.ts", "src/tools/cli/command.ts"),
        edge("src/addons/sidekiq-cron/web/pages.ts", "src/tools/web/extension.ts"),
        edge("src/addons/addon.ts", "src/assembly/worker.ts"),
        edge("src/assembly/worker.ts", "src/addons/sidekiq-cron/install.ts"),
        edge("src/tools/cli/queues-command.ts", "src/core/api/queue.ts"),
        edge("src/index.ts", "src/assembly/worker.ts"),
      ]),
    ).toEqual([
      "src/core/client/client.ts:1 → src/tools/contract/document.ts: core imports tools, a layer above it",
      "src/core/server/types.ts:1 → src/addons/addon.ts: core imports addons, a layer above it",
      "src/core/iterable/iterable.ts:1 → src/assembly/registry.ts: core imports assembly, a layer above it",
      "src/tools/web/handler.ts:1 → src/assembly/registry.ts: tools imports assembly, a layer above it",
      "src/tools/migration/audit.ts:1 → src/addons/sidekiq-cron/audit.ts: tools imports addons, a layer above it",
      "src/addons/sidekiq-cron/cli-command.ts:1 → src/tools/cli/command.ts: an add-on imports a tool's internals (only src/tools/<tool>/extension.ts)",
      "src/addons/addon.ts:1 → src/assembly/worker.ts: addons imports assembly, a layer above it",
    ]);
    expect(
      undeclaredFolders([
        "src/core/wire/generated/v8/job.ts",
        "src/core/newthing/a.ts",
        "src/addons/addon.ts",
        "src/addons/sidekiq-new-gem/addon.ts",
        "src/tools/web/pages/busy.ts",
        "src/index.ts",
        "src/lonely/b.ts",
      ]),
    ).toEqual(["src/addons/sidekiq-new-gem", "src/core/newthing", "src/lonely"]);
  });

  it("src/core/server/ imports only the wire, redis, client, contract, config, logging and middleware (add-ons plug in through its seams; the API and tools stand on it)", () => {
    const offending = serverViolations(edges);
    expect(offending, `src/core/server/ imports what it must not:\n${offending.join("\n")}`).toEqual([]);
  });

  it("src/core/server/'s rule catches an import of the API, a tool or an add-on (fake edges)", () => {
    const edge = (to: string) => ({ from: "src/core/server/processor.ts", to, line: 1 });
    expect(
      serverViolations(
        [
          "src/core/api/queue.ts",
          "src/tools/contract/drift.ts",
          "src/core/iterable/iterable.ts",
          "src/addons/addon.ts",
          "src/core/wire/keys.ts",
          "src/core/contract/handlers.ts",
          "src/core/server/types.ts",
        ].map(edge),
      ),
    ).toEqual([
      "src/core/server/processor.ts:1 → src/core/api/queue.ts",
      "src/core/server/processor.ts:1 → src/tools/contract/drift.ts",
      "src/core/server/processor.ts:1 → src/core/iterable/iterable.ts",
      "src/core/server/processor.ts:1 → src/addons/addon.ts",
    ]);
  });

  it("src/core/logging/ imports nothing from src/core/server/: the job logger only logs (the server's job watch calls it)", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/logging") && under(e.to, "src/core/server"))
      .map(edgeText);
    expect(offending, `src/core/logging/ imports the server:\n${offending.join("\n")}`).toEqual([]);
  });

  it("src/core/middleware/ imports nothing outside itself: the client and the server share its chain, so it knows neither", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/middleware") && !under(e.to, "src/core/middleware"))
      .map(edgeText);
    expect(offending, `src/core/middleware/ imports from other folders:\n${offending.join("\n")}`).toEqual([]);
  });

  it("src/core/wire/ imports nothing outside src/core/wire/ (the ground layer)", () => {
    const offending = edges
      .filter((e) => under(e.from, "src/core/wire") && !under(e.to, "src/core/wire"))
      .map(edgeText);
    expect(offending, `src/core/wire/ imports from other layers:\n${offending.join("\n")}`).toEqual([]);
  });
});
