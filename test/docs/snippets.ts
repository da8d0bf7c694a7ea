// The code blocks of README.md and the hand-written docs, and one TypeScript
// program that type-checks them all against the package's public entry points.
//
// Every ```ts, ```typescript, ```js and ```javascript block is a module of its
// own that imports the package by its public names ("sidekiq-bridge",
// "sidekiq-bridge/web", …), resolved to src/ through the export map's entry
// points, under the project's compiler options (JavaScript blocks with
// checkJs). Its fence may say more after the language:
//   runnable=<name>   README only: interop-tests/readme.test.ts also runs it
//   assumes=a,b       names the block uses from earlier blocks or from the
//                     reader's own code, declared for it from givens.ts
//   no-check=why      not checked, for the reason given (a handful at most; a
//                     reason with spaces is quoted: no-check="an excerpt")
//   excerpt=path      lines of that source file, in its order (lines between
//                     them left out; "// ..." marks where): checked against
//                     the file instead of type-checked, so it cannot drift
// The modules are never written to disk: they live in the compiler host, at
// paths under test/docs/ so that node_modules resolves as for the tests.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { ENTRY_POINTS } from "../../scripts/api-report.js";
import { FRAMEWORK_TYPES, GIVENS } from "./givens.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The fence attributes a block may carry. */
const ATTRIBUTES = new Set(["runnable", "assumes", "no-check", "excerpt"]);

/**
 * The lines of an `excerpt=path` block not found in that file in order
 * (compared without their indentation; blank lines and "// ..." skipped).
 */
export function excerptMismatches(code: string, path: string): string[] {
  const source = readFileSync(join(ROOT, path), "utf8")
    .split("\n")
    .map((l) => l.trim());
  let at = 0;
  const missing: string[] = [];
  for (const line of code.split("\n").map((l) => l.trim())) {
    if (line === "" || line === "// ...") continue;
    const found = source.indexOf(line, at);
    if (found < 0) missing.push(line);
    else at = found + 1;
  }
  return missing;
}
const LANGUAGES: Readonly<Record<string, "ts" | "js">> = { ts: "ts", typescript: "ts", js: "js", javascript: "js" };

/** The Markdown files whose blocks are checked: README, bench's, and docs/ but the generated API reference. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md") && f !== "API.md")
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", "bench/README.md", ...docs];
}

export interface Block {
  /** The Markdown file, relative to the repository. */
  file: string;
  /** The line of the first line of code (1-based). */
  line: number;
  lang: "ts" | "js";
  attrs: Map<string, string>;
  code: string;
}

/** `runnable=x assumes=a,b nocheck="a reason"` as a map; throws on what it cannot read. */
export function parseAttributes(info: string, where: string): Map<string, string> {
  const attrs = new Map<string, string>();
  let rest = info.trim();
  while (rest !== "") {
    const m = /^([\w-]+)=(?:"([^"]*)"|(\S+))\s*/.exec(rest);
    if (!m) throw new Error(`${where}: cannot read the fence attributes "${rest}"`);
    if (!ATTRIBUTES.has(m[1]!)) throw new Error(`${where}: unknown fence attribute "${m[1]}"`);
    attrs.set(m[1]!, m[2] ?? m[3]!);
    rest = rest.slice(m[0].length);
  }
  return attrs;
}

/**
 * The TypeScript and JavaScript blocks of one Markdown text: fenced with three
 * or more backticks, at any indentation (a list item's block is indented; its
 * lines lose that indentation). As in CommonMark, a line whose info string
 * holds a backtick is not a fence (it is inline code).
 */
export function extractBlocks(file: string, markdown: string): Block[] {
  const lines = markdown.split("\n");
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(\w*)([^`]*)$/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, language, info] = open as unknown as [string, string, string, string, string];
    let end = i + 1;
    const closes = (line: string) => (/^\s*(`+)\s*$/.exec(line)?.[1]?.length ?? 0) >= fence.length;
    while (end < lines.length && !closes(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${file}:${i + 1}: the code block is never closed`);
    const lang = LANGUAGES[language];
    if (lang)
      out.push({
        file,
        line: i + 2,
        lang,
        attrs: parseAttributes(info, `${file}:${i + 1}`),
        code: lines
          .slice(i + 1, end)
          .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()))
          .join("\n"),
      });
    i = end;
  }
  return out;
}

export function allBlocks(): Block[] {
  return documentationFiles().flatMap((f) => extractBlocks(f, readFileSync(join(ROOT, f), "utf8")));
}

/** A block's module: its givens on the first line, then its code from the second. */
function moduleText(block: Block): string {
  const assumed = (block.attrs.get("assumes") ?? "").split(",").filter((n) => n !== "");
  const unknown = assumed.filter((n) => !(n in GIVENS));
  if (unknown.length > 0)
    throw new Error(`${block.file}:${block.line}: assumes ${unknown.join(", ")}, not in test/docs/givens.ts`);
  if (assumed.length > 0 && block.lang === "js")
    throw new Error(`${block.file}:${block.line}: a JavaScript block cannot assume names; make it a ts block`);
  return `${assumed.map((n) => GIVENS[n]).join(" ")}\n${block.code}\n`;
}

export interface Checked {
  block: Block;
  /** "README.md:74: TS2304 Cannot find name 'x'." for each problem. */
  problems: string[];
}

/** Type-checks the blocks in one program and returns each block's problems. */
export function checkBlocks(blocks: readonly Block[]): Checked[] {
  const dir = join(ROOT, "test/docs/.snippets");
  const virtual = new Map<string, string>();
  const paths = new Map<string, Block>();
  blocks.forEach((block, i) => {
    const name = `${block.file.replace(/[^\w]+/g, "-")}-${block.line}-${i}.${block.lang === "ts" ? "mts" : "mjs"}`;
    const path = join(dir, name);
    virtual.set(path, moduleText(block));
    paths.set(path, block);
  });
  const frameworks = join(dir, "frameworks.d.ts");
  virtual.set(frameworks, FRAMEWORK_TYPES);

  const config = ts.readConfigFile(join(ROOT, "tsconfig.json"), ts.sys.readFile).config;
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, ROOT);
  const program = ts.createProgram(
    [...virtual.keys()],
    {
      ...options,
      noEmit: true,
      allowJs: true,
      checkJs: true,
      // The public names, and only those: each entry point to its source.
      paths: Object.fromEntries(ENTRY_POINTS.map((e) => [e.subpath, [join(ROOT, e.source)]])),
    },
    hostWith(options, virtual),
  );

  const global = program.getOptionsDiagnostics().concat(program.getGlobalDiagnostics());
  if (global.length > 0) throw new Error(ts.formatDiagnostics(global, formatHost()));
  return [...paths].map(([path, block]) => {
    const sf = program.getSourceFile(path)!;
    const diagnostics = [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)];
    return {
      block,
      problems: diagnostics.map((d) => {
        const line = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line;
        // Line 0 of the module holds the givens, line 1 is the block's first line.
        const at = line === 0 ? `${block.line - 1} (assumes)` : `${block.line + line - 1}`;
        return `${block.file}:${at}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
      }),
    };
  });
}

function hostWith(options: ts.CompilerOptions, virtual: Map<string, string>): ts.CompilerHost {
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, language, onError, create) => {
    const text = virtual.get(f);
    return text === undefined
      ? getSourceFile.call(host, f, language, onError, create)
      : ts.createSourceFile(f, text, language, true);
  };
  return host;
}

function formatHost(): ts.FormatDiagnosticsHost {
  return {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => "\n",
  };
}

/** Where a block is, for messages: README.md:74. */
export function where(block: Block): string {
  return `${relative(ROOT, join(ROOT, block.file))}:${block.line}`;
}
