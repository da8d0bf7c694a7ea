// Lists the exports in src/ that nothing uses: no other file (src, tests,
// interop tests, bench, chaos, scripts, harness) imports them, and no package
// entry point reaches them. Each such `export` is either dead code or a name
// that should be module-private. Also lists re-exports (`export { x } from`)
// that no file imports through. Run: npx tsx scripts/dead-exports.ts
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { ENTRY_POINTS } from "./api-report.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

export interface DeadExport {
  file: string;
  line: number;
  name: string;
  /** "declaration": the export keyword on a declaration; "re-export": an `export { x } from` line. */
  kind: "declaration" | "re-export";
}

function createProgram(): ts.Program {
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, ts.sys.readFile).config;
  const { options, fileNames } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  return ts.createProgram(fileNames, { ...options, noEmit: true });
}

export function findDeadExports(program = createProgram()): DeadExport[] {
  const c = program.getTypeChecker();
  const rel = (f: string) => relative(ROOT, f);
  const files = program.getSourceFiles().filter((f) => !f.isDeclarationFile && !f.fileName.includes("/node_modules/"));
  const entries = new Set(ENTRY_POINTS.map((e) => e.source));

  const target = (s: ts.Symbol): ts.Symbol => (s.flags & ts.SymbolFlags.Alias ? c.getAliasedSymbol(s) : s);
  /** Declarations used from a file other than their own. */
  const used = new Set<ts.Symbol>();
  /** `${file}#${name}`: a name imported from that module (by the specifier's file, not the declaration's). */
  const importedFrom = new Set<string>();
  const moduleFile = (spec: ts.Expression, from: ts.SourceFile): ts.SourceFile | undefined => {
    const m = c.getSymbolAtLocation(spec);
    const d = m?.valueDeclaration ?? m?.declarations?.[0];
    return d && ts.isSourceFile(d) && d !== from ? d : undefined;
  };
  const useAll = (mod: ts.SourceFile) => {
    const ms = c.getSymbolAtLocation(mod);
    if (!ms) return;
    for (const e of c.getExportsOfModule(ms)) {
      used.add(target(e));
      importedFrom.add(`${rel(mod.fileName)}#${e.name}`);
    }
  };
  const use = (mod: ts.SourceFile | undefined, name: string, node: ts.Node | undefined) => {
    if (!mod) return;
    importedFrom.add(`${rel(mod.fileName)}#${name}`);
    const ms = c.getSymbolAtLocation(mod);
    const e = ms && c.getExportsOfModule(ms).find((x) => x.name === name);
    if (e) used.add(target(e));
    else if (node) {
      const s = c.getSymbolAtLocation(node);
      if (s) used.add(target(s));
    }
  };

  for (const sf of files) {
    const isEntry = entries.has(rel(sf.fileName));
    if (isEntry) useAll(sf);
    const visit = (n: ts.Node): void => {
      if (ts.isImportDeclaration(n)) {
        const mod = moduleFile(n.moduleSpecifier, sf);
        const cl = n.importClause;
        if (mod && cl) {
          if (cl.name) use(mod, "default", cl.name);
          const nb = cl.namedBindings;
          if (nb && ts.isNamespaceImport(nb)) useAll(mod);
          else if (nb) for (const el of nb.elements) use(mod, (el.propertyName ?? el.name).text, el.name);
        }
      } else if (ts.isExportDeclaration(n) && n.moduleSpecifier) {
        const mod = moduleFile(n.moduleSpecifier, sf);
        // A barrel's re-export uses nothing by itself: whoever imports through
        // it does (checked below). An entry point's re-exports are the API.
        if (mod && isEntry) {
          if (!n.exportClause) useAll(mod);
          else if (ts.isNamedExports(n.exportClause))
            for (const el of n.exportClause.elements) use(mod, (el.propertyName ?? el.name).text, el.name);
        }
      } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
        const mod = moduleFile(n.argument.literal, sf);
        if (mod) {
          if (n.qualifier)
            use(mod, ts.isIdentifier(n.qualifier) ? n.qualifier.text : n.qualifier.left.getText(), n.qualifier);
          else useAll(mod);
        }
      } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0]) {
        const mod = moduleFile(n.arguments[0], sf);
        if (mod) {
          // `const { a, b } = await import("m")` and `(await import("m")).a` use those names; anything else, all.
          let p: ts.Node = n.parent;
          if (ts.isAwaitExpression(p)) p = p.parent;
          while (ts.isParenthesizedExpression(p)) p = p.parent;
          if (ts.isVariableDeclaration(p) && ts.isObjectBindingPattern(p.name))
            for (const el of p.name.elements) use(mod, (el.propertyName ?? el.name).getText(), undefined);
          else if (ts.isPropertyAccessExpression(p)) use(mod, p.name.text, undefined);
          else useAll(mod);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }

  // Barrels: `export * from "m"` passes on what is imported through it.
  let changed = true;
  while (changed) {
    changed = false;
    for (const sf of files) {
      for (const st of sf.statements) {
        if (!ts.isExportDeclaration(st) || !st.moduleSpecifier) continue;
        const mod = moduleFile(st.moduleSpecifier, sf);
        if (!mod) continue;
        const pairs: Array<[string, string]> = [];
        if (!st.exportClause) {
          const ms = c.getSymbolAtLocation(mod);
          for (const e of ms ? c.getExportsOfModule(ms) : []) pairs.push([e.name, e.name]);
        } else if (ts.isNamedExports(st.exportClause))
          for (const el of st.exportClause.elements) pairs.push([el.name.text, (el.propertyName ?? el.name).text]);
        for (const [outer, inner] of pairs) {
          const k = `${rel(mod.fileName)}#${inner}`;
          if (importedFrom.has(`${rel(sf.fileName)}#${outer}`) && !importedFrom.has(k)) {
            importedFrom.add(k);
            changed = true;
          }
        }
      }
    }
  }

  const dead: DeadExport[] = [];
  for (const sf of files) {
    const name = rel(sf.fileName);
    if (!name.startsWith("src/") || entries.has(name)) continue;
    const line = (n: ts.Node) => sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1;
    for (const st of sf.statements) {
      if (ts.isExportDeclaration(st) && st.exportClause && ts.isNamedExports(st.exportClause)) {
        for (const el of st.exportClause.elements)
          if (!importedFrom.has(`${name}#${el.name.text}`))
            dead.push({
              file: name,
              line: line(el),
              name: el.name.text,
              kind: st.moduleSpecifier ? "re-export" : "declaration",
            });
        continue;
      }
      const mods = ts.canHaveModifiers(st) ? ts.getModifiers(st) : undefined;
      if (!mods?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
      const names: ts.Identifier[] = [];
      if (ts.isVariableStatement(st)) {
        for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name);
      } else if ("name" in st && st.name && ts.isIdentifier(st.name as ts.Node)) names.push(st.name as ts.Identifier);
      for (const id of names) {
        const s = c.getSymbolAtLocation(id);
        if (s && !used.has(s) && !importedFrom.has(`${name}#${id.text}`))
          dead.push({ file: name, line: line(id), name: id.text, kind: "declaration" });
      }
    }
  }
  return dead;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dead = findDeadExports();
  for (const d of dead) console.log(`${d.file}:${d.line}\t${d.kind}\t${d.name}`);
  console.log(
    `${dead.filter((d) => d.kind === "declaration").length} exported declarations and ${dead.filter((d) => d.kind === "re-export").length} re-exports used by no other file`,
  );
}
