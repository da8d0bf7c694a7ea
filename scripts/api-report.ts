// Writes the API reference from the package's entry points and their TSDoc:
// docs/API.md, an index of the entry points, and one page per entry point in
// docs/api/. `--check` exits 1 when a page is not what this would write, so a
// public name or signature cannot change without the reference (and the
// reviewer) seeing it. test/package/api-report.test.ts runs the same check.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = new URL("../", import.meta.url);

/** The package's entry points: export-map subpath -> source file. */
export const ENTRY_POINTS: ReadonlyArray<{ subpath: string; source: string }> = [
  { subpath: "sidekiq-bridge", source: "src/index.ts" },
  { subpath: "sidekiq-bridge/wire", source: "src/core/wire/public.ts" },
  { subpath: "sidekiq-bridge/web", source: "src/assembly/web.ts" },
  { subpath: "sidekiq-bridge/metrics", source: "src/tools/metrics/index.ts" },
  { subpath: "sidekiq-bridge/tracing", source: "src/tools/tracing/index.ts" },
  { subpath: "sidekiq-bridge/migration", source: "src/assembly/migration.ts" },
  { subpath: "sidekiq-bridge/sidekiq-cron", source: "src/addons/sidekiq-cron/public.ts" },
  { subpath: "sidekiq-bridge/sidekiq-unique-jobs", source: "src/addons/sidekiq-unique-jobs/public.ts" },
  { subpath: "sidekiq-bridge/sidekiq-scheduler", source: "src/addons/sidekiq-scheduler/public.ts" },
  { subpath: "sidekiq-bridge/testing", source: "src/testing/index.ts" },
  { subpath: "sidekiq-bridge/testing/matchers", source: "src/testing/matchers.ts" },
  { subpath: "sidekiq-bridge/testing/vitest", source: "src/testing/vitest.ts" },
  { subpath: "sidekiq-bridge/testing/jest", source: "src/testing/jest.ts" },
];

/**
 * How many names the package may export: at the root, and across every entry
 * point together. A name is public when a program calls or constructs it,
 * catches it, or writes it as a type (options it passes, a handler or
 * middleware it implements and the context that gets); a type reached only
 * through another stays internal. Past these, `--check` and the unit test fail.
 */
export const NAME_LIMITS = { root: 90, total: 200 } as const;

/** What exceeds NAME_LIMITS, one line each (none when within them). */
export function limitProblems(api: ReadonlyMap<string, readonly Entry[]>): string[] {
  const root = api.get(ENTRY_POINTS[0]!.subpath)?.length ?? 0;
  const total = [...api.values()].reduce((n, e) => n + e.length, 0);
  const problems: string[] = [];
  if (root > NAME_LIMITS.root)
    problems.push(`${ENTRY_POINTS[0]!.subpath} exports ${root} names, more than ${NAME_LIMITS.root}`);
  if (total > NAME_LIMITS.total)
    problems.push(`the entry points export ${total} names together, more than ${NAME_LIMITS.total}`);
  return problems;
}

export interface Entry {
  name: string;
  kind: string;
  signature: string;
  doc: string;
}

const FLAGS = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;

function kindOf(s: ts.Symbol): string {
  if (s.flags & ts.SymbolFlags.Class) return "class";
  if (s.flags & ts.SymbolFlags.Function) return "function";
  if (s.flags & ts.SymbolFlags.Interface) return "interface";
  if (s.flags & ts.SymbolFlags.TypeAlias) return "type";
  if (s.flags & ts.SymbolFlags.Enum) return "enum";
  if (s.flags & ts.SymbolFlags.Variable) return "const";
  return "other";
}

function docOf(s: ts.Symbol, c: ts.TypeChecker): string {
  return ts.displayPartsToString(s.getDocumentationComment(c)).trim();
}

function memberLines(s: ts.Symbol, c: ts.TypeChecker, decl: ts.Declaration): string[] {
  const lines: string[] = [];
  const members = s.members ? [...s.members.values()] : [];
  for (const m of members) {
    const d = m.declarations?.[0];
    if (!d) continue;
    const mods = ts.getCombinedModifierFlags(d);
    if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    if (m.name.startsWith("#") || m.name === "__constructor") continue;
    const t = c.getTypeOfSymbolAtLocation(m, decl);
    const opt = m.flags & ts.SymbolFlags.Optional ? "?" : "";
    if (m.flags & ts.SymbolFlags.Method) {
      for (const sig of t.getCallSignatures()) lines.push(`${m.name}${c.signatureToString(sig, undefined, FLAGS)}`);
    } else if (m.flags & (ts.SymbolFlags.Property | ts.SymbolFlags.GetAccessor)) {
      const ro = mods & ts.ModifierFlags.Readonly ? "readonly " : "";
      lines.push(`${ro}${m.name}${opt}: ${c.typeToString(t, undefined, FLAGS)}`);
    }
  }
  return lines;
}

/**
 * The checker spells a type from a dependency as `import("/abs/path/node_modules/pkg/…")`:
 * keep only the package path, so the reference is the same in every checkout.
 */
function portable(signature: string): string {
  return signature.replace(/import\("[^"]*\/node_modules\/([^"]+)"\)/g, 'import("$1")');
}

function describe(name: string, s: ts.Symbol, c: ts.TypeChecker): Entry {
  const decl = s.declarations?.[0];
  const kind = kindOf(s);
  let signature = "";
  if (decl) {
    if (kind === "function") {
      const t = c.getTypeOfSymbolAtLocation(s, decl);
      signature = t
        .getCallSignatures()
        .map((sig) => `function ${name}${c.signatureToString(sig, undefined, FLAGS)}`)
        .join("\n");
    } else if (kind === "const") {
      signature = `const ${name}: ${c.typeToString(c.getTypeOfSymbolAtLocation(s, decl), undefined, FLAGS)}`;
    } else if (kind === "type") {
      const node = decl as ts.TypeAliasDeclaration;
      signature = `type ${name}${node.typeParameters ? `<${node.typeParameters.map((p) => p.getText()).join(", ")}>` : ""} = ${node.type.getText()}`;
    } else if (kind === "class" || kind === "interface") {
      const lines: string[] = [];
      if (kind === "class") {
        const ctor = c.getTypeOfSymbolAtLocation(s, decl);
        for (const sig of ctor.getConstructSignatures())
          lines.push(`constructor${c.signatureToString(sig, undefined, FLAGS).replace(/: \S+$/, "")}`);
        for (const st of c.getPropertiesOfType(ctor)) {
          if (st.name === "prototype") continue;
          const sd = st.declarations?.[0];
          if (!sd || ts.getCombinedModifierFlags(sd) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected))
            continue;
          lines.push(`static ${st.name}: ${c.typeToString(c.getTypeOfSymbolAtLocation(st, decl), undefined, FLAGS)}`);
        }
      }
      lines.push(...memberLines(s, c, decl));
      const head = (decl as ts.ClassDeclaration | ts.InterfaceDeclaration).typeParameters;
      const tp = head ? `<${head.map((p) => p.getText()).join(", ")}>` : "";
      signature = `${kind} ${name}${tp} {\n${lines.map((l) => `  ${l};`).join("\n")}\n}`;
    }
  }
  signature = portable(signature);
  return { name, kind, signature, doc: docOf(s, c) };
}

/** The public names of each entry point, with kind, signature and TSDoc summary. */
export function collectApi(): Map<string, Entry[]> {
  const files = ENTRY_POINTS.map((e) => fileURLToPath(new URL(e.source, ROOT)));
  const config = ts.readConfigFile(fileURLToPath(new URL("tsconfig.json", ROOT)), ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, fileURLToPath(ROOT));
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const c = program.getTypeChecker();
  const out = new Map<string, Entry[]>();
  ENTRY_POINTS.forEach((e, i) => {
    const sf = program.getSourceFile(files[i]!)!;
    const mod = c.getSymbolAtLocation(sf)!;
    const entries = c.getExportsOfModule(mod).map((x) => {
      const target = x.flags & ts.SymbolFlags.Alias ? c.getAliasedSymbol(x) : x;
      return describe(x.name, target, c);
    });
    entries.sort((a, b) => a.name.localeCompare(b.name, "en"));
    out.set(e.subpath, entries);
  });
  return out;
}

/** Where an entry point's page is, relative to docs/: api/sidekiq-bridge-wire.md. */
export function pagePath(subpath: string): string {
  return `api/${subpath.replace(/[^a-z]+/gi, "-").toLowerCase()}.md`;
}

const GENERATED = "<!-- generated by npm run api:docs from the entry points' TSDoc: do not edit -->";

/** Every page of the reference, by its path under docs/: the index (API.md), then one page per entry point. */
export function renderApi(api: Map<string, Entry[]>): Map<string, string> {
  const pages = new Map<string, string>();
  const index = [
    "# API reference",
    "",
    GENERATED,
    "",
    "Everything a program can import from the package, by entry point, one page each. Any",
    "other module under `dist/` is internal and may change in any release.",
    "",
    "| entry point | names | |",
    "| --- | ---: | --- |",
  ];
  for (const [subpath, entries] of api) {
    index.push(`| [\`${subpath}\`](${pagePath(subpath)}) | ${entries.length} | ${SUMMARIES[subpath] ?? ""} |`);
    const parts = [`# \`${subpath}\``, "", GENERATED, "", "[All entry points](../API.md)", ""];
    parts.push(entries.map((e) => `[\`${e.name}\`](#${anchor(subpath, e.name)})`).join(" · "), "");
    for (const e of entries) {
      parts.push(`<a id="${anchor(subpath, e.name)}"></a>`, `## ${e.kind} \`${e.name}\``, "");
      parts.push(e.doc || "_(no description)_", "");
      if (e.signature) parts.push("```ts", e.signature, "```", "");
    }
    pages.set(pagePath(subpath), parts.join("\n"));
  }
  index.push("");
  return new Map([["API.md", index.join("\n")], ...pages]);
}

/** One line on each entry point, for the index. */
const SUMMARIES: Readonly<Record<string, string>> = {
  "sidekiq-bridge": "the client, the worker, the API, ActiveJob and mailers, the errors",
  "sidekiq-bridge/wire": "the lossless codec of Sidekiq's records, time units, release rules, schemas",
  "sidekiq-bridge/web": "the dashboard as a handler or a server",
  "sidekiq-bridge/metrics": "Prometheus metrics of a worker",
  "sidekiq-bridge/tracing": "OpenTelemetry middleware, as Ruby's instrumentation",
  "sidekiq-bridge/migration": "audit, move, rewrite timestamps, export and import a fleet's jobs",
  "sidekiq-bridge/sidekiq-cron": "sidekiq-cron's jobs and poller, and fugit's cron syntax",
  "sidekiq-bridge/sidekiq-unique-jobs": "sidekiq-unique-jobs' locks on a Node client and worker",
  "sidekiq-bridge/sidekiq-scheduler": "sidekiq-scheduler's settings from a sidekiq.yml",
  "sidekiq-bridge/testing": "Sidekiq's fake and inline testing modes, with no Redis",
  "sidekiq-bridge/testing/matchers": "the testing assertions as matchers, for vitest's and jest's expect.extend",
  "sidekiq-bridge/testing/vitest": "types only: the matchers on vitest's assertions",
  "sidekiq-bridge/testing/jest": "types only: the matchers on jest's assertions",
};

function anchor(subpath: string, name: string): string {
  return `${subpath.replace(/[^a-z]+/gi, "-")}-${name}`.toLowerCase();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const api = collectApi();
  const pages = renderApi(api);
  const docs = new URL("docs/", ROOT);
  if (process.argv.includes("--check")) {
    for (const problem of limitProblems(api)) {
      console.error(`${problem}: keep only what a user calls or types (scripts/api-report.ts, NAME_LIMITS).`);
      process.exit(1);
    }
    for (const [path, text] of pages) {
      let current = "";
      try {
        current = readFileSync(new URL(path, docs), "utf8");
      } catch {}
      if (current !== text) {
        console.error(`docs/${path} is out of date with the public API: run npm run api:docs and review the diff.`);
        process.exit(1);
      }
    }
  } else {
    mkdirSync(new URL("api/", docs), { recursive: true });
    for (const [path, text] of pages) writeFileSync(new URL(path, docs), text);
    console.log(
      `wrote docs/API.md and ${pages.size - 1} pages (${[...api.values()].reduce((n, e) => n + e.length, 0)} names)`,
    );
  }
}
