// What importing `sidekiq-bridge/web` loads: the modules its entry reaches by
// runtime imports (type-only imports and import() on first use left out).
// The dashboard shows the add-ons' tabs from their entries, which are data,
// so it loads no add-on's runtime: no poller, middleware, install or audit.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The relative modules a file imports at run time. */
function runtimeImports(file: string): string[] {
  const src = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  for (const st of src.statements) {
    if (ts.isImportDeclaration(st)) {
      const clause = st.importClause;
      if (clause?.isTypeOnly) continue;
      const named = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        !clause.name &&
        named !== undefined &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) out.push((st.moduleSpecifier as ts.StringLiteral).text);
    } else if (ts.isExportDeclaration(st) && st.moduleSpecifier && !st.isTypeOnly) {
      out.push((st.moduleSpecifier as ts.StringLiteral).text);
    }
  }
  return out.filter((s) => s.startsWith("."));
}

/** Every module `entry` loads, relative to the repository. */
export function loadedBy(entry: string): string[] {
  const seen = new Set<string>();
  const stack = [join(ROOT, entry)];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const s of runtimeImports(f)) {
      const to = join(dirname(f), s).replace(/\.js$/, ".ts");
      if (existsSync(to)) stack.push(to);
    }
  }
  return [...seen].map((f) => relative(ROOT, f)).sort();
}

const ADDON_FOLDERS = /^src\/(addons\/(sidekiq-[^/]+|fugit|pollers)|core\/iterable|tools\/tracing)\//;
/** What the tabs need at once: each entry, and how the Cron and Locks tabs resolve their options. */
const ADDON_MODULES_ALLOWED = new Set([
  "src/addons/sidekiq-cron/addon.ts",
  "src/addons/sidekiq-cron/web/settings.ts",
  "src/addons/sidekiq-unique-jobs/addon.ts",
  "src/addons/sidekiq-unique-jobs/config.ts",
  "src/addons/sidekiq-unique-jobs/digest.ts",
  "src/addons/sidekiq-unique-jobs/fpconv.ts",
  "src/addons/sidekiq-unique-jobs/marker.ts",
  "src/addons/sidekiq-scheduler/addon.ts",
  "src/addons/sidekiq-throttled/addon.ts",
  "src/tools/tracing/trace-context.ts",
  "src/addons/sidekiq-pro-batches/addon.ts",
]);

describe("importing sidekiq-bridge/web", () => {
  const modules = loadedBy("src/assembly/web.ts");

  it("loads of the add-ons only their entries and their tabs' options, none of their runtime", () => {
    expect(modules.filter((m) => ADDON_FOLDERS.test(m) && !ADDON_MODULES_ALLOWED.has(m))).toEqual([]);
    expect(modules).toContain("src/addons/sidekiq-cron/addon.ts");
  });

  it("loads about 115 modules (151 when each entry imported its add-on's runtime)", () => {
    expect(modules.length, modules.join("\n")).toBeLessThanOrEqual(118);
  });
});
