// The repository paths that the docs and the source comments name, and which
// of them are not there. What counts as a path of this repository, so that a
// moved file is caught and Sidekiq's own files are not:
//   - a path whose first segment is a top-level folder of the repository
//     (`src/core/server/launcher.ts`, `docs/OPERATING.md`, `src/addons/`):
//     it must exist as written;
//   - a file name with no folder ending in .ts (`fetch.ts`): a file of that
//     name must exist somewhere in the repository (a one-letter name, as in
//     `a.ts → b.ts`, is a placeholder);
//   - a path of two or more segments under no top-level folder, ending in .ts
//     or .md (`wire/release-rules.ts`): some file's path must end with those
//     segments;
//   - in Markdown, a code span that is nothing but a lower-case path of two or
//     more segments whose last is the name of a file or folder of ours
//     (`sidekiq-cron/web`): some path must end with it;
//   - in Markdown, the package's entry points (`sidekiq-bridge/web`): an
//     export of package.json;
//   - `./` and `../` before a .ts file: what follows them, as above.
// Sidekiq's and the gems' files (`lib/sidekiq/fetch.rb`, `redis_client.rb:421`,
// `Changes.md`) start under no top-level folder of ours and are no .ts file.
// `<name>` and `*` stand for any one name, `{a,b}` for each of its choices;
// `#fragment` and `:line` after a path are not part of it.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ROOT } from "./snippets.js";

/** Folders never walked: installed, built, or mounted by the tests. */
const NOT_WALKED = new Set(["node_modules", "dist", ".git", ".screenshots", "ruby-fixtures/peers"]);

/** The repository as it is on disk, relative to ROOT. */
export interface Tree {
  /** Files, and folders with a "/" after them. */
  entries: ReadonlySet<string>;
  /** The entries by their last segment's name. */
  byName: ReadonlyMap<string, readonly string[]>;
  topFolders: ReadonlySet<string>;
  /** The package's name and its entry points' subpaths (`web` for `./web`). */
  packageName: string;
  exports: ReadonlySet<string>;
}

export function readTree(root = ROOT): Tree {
  const entries = new Set<string>();
  const byName = new Map<string, string[]>();
  const walk = (rel: string): void => {
    for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === "" ? d.name : `${rel}/${d.name}`;
      if (NOT_WALKED.has(path) || NOT_WALKED.has(d.name)) continue;
      const entry = d.isDirectory() ? `${path}/` : path;
      entries.add(entry);
      const named = byName.get(d.name);
      if (named) named.push(entry);
      else byName.set(d.name, [entry]);
      if (d.isDirectory()) walk(path);
    }
  };
  walk("");
  const topFolders = new Set([...entries].filter((e) => /^[^/]+\/$/.test(e)).map((e) => e.slice(0, -1)));
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, unknown>;
  };
  const exports = new Set(Object.keys(pkg.exports).map((k) => k.replace(/^\.\/?/, "")));
  return { entries, byName, topFolders, packageName: pkg.name, exports };
}

/** A path named in a text, where. */
export interface NamedPath {
  file: string;
  line: number;
  path: string;
}

/** Runs of characters a path is made of; `{a,b}` is kept whole. */
const WORD = /(?:[\w.<>*@-]|\{[\w.,-]*\}|\/)+/g;
const WILD = /<[^<>/]*>|\*/;

function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (!m) return [path];
  return m[1]!
    .split(",")
    .flatMap((choice) => expandBraces(path.slice(0, m.index) + choice + path.slice(m.index + m[0].length)));
}

/** A regular expression's source for one path: `<name>` and `*` stand for any run of a name's characters. */
function patternSource(path: string): string {
  return path
    .split(/(<[^<>/]*>|\*)/)
    .map((part, i) => (i % 2 === 1 ? "[^/]+" : part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
}

/**
 * Whether one path (no braces left) is there: as written from the root
 * ("rooted"), or as the whole trailing segments of some entry ("suffix"). A
 * path with a "/" after it names a folder.
 */
function isThere(tree: Tree, path: string, rule: "rooted" | "suffix"): boolean {
  const folder = path.endsWith("/");
  const bare = folder ? path.slice(0, -1) : path;
  const fits = (e: string) => !folder || e.endsWith("/");
  if (!WILD.test(bare)) {
    if (rule === "rooted") return tree.entries.has(`${bare}/`) || (!folder && tree.entries.has(bare));
    const name = bare.slice(bare.lastIndexOf("/") + 1);
    return (tree.byName.get(name) ?? []).some((e) => {
      const p = e.endsWith("/") ? e.slice(0, -1) : e;
      return fits(e) && (p === bare || p.endsWith(`/${bare}`));
    });
  }
  const whole = new RegExp(`${rule === "rooted" ? "^" : "(?:^|/)"}${patternSource(bare)}$`);
  for (const e of tree.entries) if (fits(e) && whole.test(e.endsWith("/") ? e.slice(0, -1) : e)) return true;
  return false;
}

export type TextKind = "markdown" | "comment";

/**
 * The paths of this repository named in one piece of text, and whether each is
 * there. `codeSpan` says the text is a whole Markdown code span (the only place
 * a path with no top-level folder and no .ts or .md, like `sidekiq-cron/web`,
 * is taken for one).
 */
export function pathsIn(
  text: string,
  tree: Tree,
  opts: { kind: TextKind; codeSpan?: boolean },
): { path: string; index: number; there: boolean }[] {
  const found: { path: string; index: number; there: boolean }[] = [];
  for (const m of text.matchAll(WORD)) {
    // A URL, a scheme (`node:fs`, `redis://`), a `$VAR/...`, a home folder.
    if (/[:$~]/.test(text[m.index - 1] ?? "")) continue;
    const word = m[0].replace(/#.*$/, "").replace(/[.,-]+$/, "");
    if (word === "" || word.startsWith("/") || word.includes("//")) continue;
    const check = (rule: "rooted" | "suffix", path: string, shown = path) => {
      found.push({ path: shown, index: m.index, there: expandBraces(path).every((p) => isThere(tree, p, rule)) });
    };
    const segments = word.split("/");
    if (word.startsWith("./") || word.startsWith("../")) {
      // From some folder the text does not say (the file's, the root's, the
      // repository's parent): only a .ts file's trailing segments are checked.
      const rest = word.replace(/^(?:\.\.?\/)+/, "");
      if (/^[\w<*{].*\.ts$/.test(rest)) check("suffix", rest, word);
    } else if (opts.kind === "markdown" && segments[0] === tree.packageName && segments.length >= 2) {
      const entry = segments.slice(1).join("/");
      found.push({ path: word, index: m.index, there: tree.exports.has(entry) });
    } else if (segments.length >= 2 && tree.topFolders.has(segments[0]!)) check("rooted", word);
    else if (segments.length === 1) {
      if (/^[\w<*{][\w<>*{},.-]+\.ts$/.test(word) && !word.endsWith(".d.ts")) check("suffix", word);
    } else if (/\.(?:ts|md)$/.test(word)) check("suffix", word);
    else if (
      opts.codeSpan === true &&
      word === text.trim() &&
      /^[a-z0-9<>{},*_-]+(?:\/[a-z0-9<>{},*_-]+)+\/?$/.test(word) &&
      tree.byName.has(segments.filter((s) => s !== "").at(-1)!)
    )
      check("suffix", word);
  }
  return found;
}

/** Where each line starts in a text, to turn an index into a line number. */
function lineOf(text: string): (index: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (index) => {
    let lo = 0,
      hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The paths a Markdown file names that are not there: in its prose, its code spans and its code blocks. */
export function missingInMarkdown(file: string, text: string, tree: Tree): NamedPath[] {
  const line = lineOf(text);
  const missing: NamedPath[] = [];
  // Code spans are read alone (a path with no top-level folder and no .ts
  // counts only as a whole span), the rest as text; link targets are the
  // links test's (test/docs/links.test.ts), relative to the file.
  let rest = text;
  for (const m of text.matchAll(/(`+)([^`]+?)\1/g)) {
    for (const p of pathsIn(m[2]!, tree, { kind: "markdown", codeSpan: true }))
      if (!p.there) missing.push({ file, line: line(m.index + m[1]!.length + p.index), path: p.path });
    rest = rest.slice(0, m.index) + " ".repeat(m[0].length) + rest.slice(m.index + m[0].length);
  }
  rest = rest.replace(/\]\([^)\s]*\)/g, (s) => " ".repeat(s.length));
  for (const p of pathsIn(rest, tree, { kind: "markdown" }))
    if (!p.there) missing.push({ file, line: line(p.index), path: p.path });
  return missing.sort((a, b) => a.line - b.line);
}

/** Tokens after which a "/" divides; after any other it starts a regular expression. */
const VALUE_END = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.PrivateIdentifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.SuperKeyword,
  ts.SyntaxKind.TrueKeyword,
  ts.SyntaxKind.FalseKeyword,
  ts.SyntaxKind.NullKeyword,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
]);

/**
 * Every comment of a TypeScript or JavaScript source, read by the compiler's
 * scanner (never a string, a template or a regular expression). The scanner
 * alone cannot tell a template's "}" or a regular expression's "/", so they
 * are rescanned by what came before: the same comments as a full parse finds
 * for every file of the repository, in a sixth of the time.
 */
export function commentsOf(text: string): { pos: number; text: string }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const comments: { pos: number; text: string }[] = [];
  const templates: number[] = []; // the brace depth at each open `${`
  let depth = 0;
  let last = ts.SyntaxKind.Unknown;
  for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) {
    if (k === ts.SyntaxKind.SingleLineCommentTrivia || k === ts.SyntaxKind.MultiLineCommentTrivia) {
      comments.push({ pos: scanner.getTokenStart(), text: scanner.getTokenText() });
      continue;
    }
    if (k === ts.SyntaxKind.WhitespaceTrivia || k === ts.SyntaxKind.NewLineTrivia || k === ts.SyntaxKind.ShebangTrivia)
      continue;
    if (k === ts.SyntaxKind.OpenBraceToken) depth++;
    else if (k === ts.SyntaxKind.CloseBraceToken) {
      if (templates.at(-1) === depth) {
        k = scanner.reScanTemplateToken(false);
        if (k === ts.SyntaxKind.TemplateTail) templates.pop();
      } else depth--;
    } else if ((k === ts.SyntaxKind.SlashToken || k === ts.SyntaxKind.SlashEqualsToken) && !VALUE_END.has(last))
      k = scanner.reScanSlashToken();
    if (k === ts.SyntaxKind.TemplateHead) templates.push(depth);
    last = k;
  }
  return comments;
}

/** The paths the comments of one source file name that are not there. */
export function missingInComments(file: string, text: string, tree: Tree): NamedPath[] {
  const line = lineOf(text);
  const missing: NamedPath[] = [];
  for (const c of commentsOf(text))
    for (const p of pathsIn(c.text, tree, { kind: "comment" }))
      if (!p.there) missing.push({ file, line: line(c.pos + p.index), path: p.path });
  return missing;
}

/** The files of the tree under some folders, with some endings. */
export function filesUnder(tree: Tree, folders: readonly string[], ending: RegExp): string[] {
  return [...tree.entries].filter((e) => folders.some((f) => e.startsWith(`${f}/`)) && ending.test(e)).sort();
}

export function read(file: string): string {
  return readFileSync(join(ROOT, file), "utf8");
}
