// docs/SUPPORT.md: which Sidekiq release line is run, read from source or
// not supported, per part of sidekiq-bridge and per add-on gem, rendered
// from interop-tests/support/support-matrix.ts (the module the sweeps name
// their tests from). `--check` exits 1 when the page is not what this would
// write (test/docs/support-table.test.ts runs the same check); `--verify`
// exits 1 unless the last sweep run (.vitest-results-support-*.json) ran all
// ten releases and passed every check a "run" cell names.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SWEEP, type SidekiqTarget } from "../harness/versions.js";
import {
  ADDON_CHECKS,
  ADDON_RELEASES,
  addonsFor,
  CORE_COLUMNS,
  INTEROP_CHECKS,
  PASSES_RUN,
  RUNTIMES,
  SERVERS,
  SOURCE_RULES,
  SWEEP_CHECKS,
  sweepChecksFor,
  type AddonGem,
  type CoreColumn,
} from "../interop-tests/support/support-matrix.js";
import { supportResultsFile, type SupportResults } from "../interop-tests/support/support-results.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const SUPPORT_PAGE = "docs/SUPPORT.md";
const GEMS = [...new Set(ADDON_RELEASES.map((a) => a.gem))] as AddonGem[];

const code = (s: string) => `\`${s}\``;
const label = (t: SidekiqTarget) =>
  `${t.version} (${t.release ? "upstream" : "Debian"}, ${t.suite}${t.preload ? `, with ${t.preload.join(", ")}` : ""})`;

/** The key of an interop describe block in the Checks list. */
const interopKey = (i: (typeof INTEROP_CHECKS)[number]) => `${i.file.replace(/^interop-tests\/|\.test\.ts$/g, "")}`;

function coreCell(t: SidekiqTarget, col: CoreColumn): string {
  const sweep = sweepChecksFor(t.version).filter((id) => (SWEEP_CHECKS[id].columns as readonly string[]).includes(col));
  const interop = INTEROP_CHECKS.filter((i) => i.columns.includes(col) && i.releases.includes(t.version));
  const names = [...sweep, ...new Set(interop.map(interopKey))];
  if (names.length > 0) return `run: ${names.map(code).join(", ")}`;
  return `read from source: ${SOURCE_RULES[col].map((r) => code(r.includes(".") ? r : `${r}.*`)).join(", ")}`;
}

function addonCell(t: SidekiqTarget, gem: AddonGem): string {
  const allowed = addonsFor(t.version).filter((a) => a.gem === gem);
  if (allowed.length > 0) return `run: ${allowed.map((a) => a.version).join(", ")}`;
  const ranges = ADDON_RELEASES.filter((a) => a.gem === gem).map((a) => `${a.version}: ${a.sidekiq.join(", ")}`);
  return `not supported (gemspec ${ranges.join("; ")})`;
}

const row = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
/** A Markdown table: its header, the separator under it, then its rows. */
const table = (head: readonly string[], rows: readonly (readonly string[])[]) => [
  row(head),
  row(head.map(() => "---")),
  ...rows.map(row),
];

/** The page, from the committed mapping alone. */
export function renderSupportTable(): string {
  const cols = Object.keys(CORE_COLUMNS) as CoreColumn[];
  const out = [
    "# Support by Sidekiq release",
    "",
    "<!-- Written by `npm run support:table` from interop-tests/support/support-matrix.ts: do not edit by hand. -->",
    "",
    'Each release line of the release sweep (the repository\'s `harness/README.md`, "The release sweep") against each',
    "part of sidekiq-bridge and each add-on gem:",
    "",
    "- **run**: checked in CI through that release's own code (and the gem's), with the checks named (listed below);",
    "- **read from source**: the rules of `src/core/wire/release-rules.ts` named were read from the release's source; nothing runs that part on it;",
    "- **not supported**: the gem's gemspec does not allow that Sidekiq release.",
    "",
    ...table(
      ["Sidekiq", ...cols.map((c) => CORE_COLUMNS[c]), ...GEMS],
      SWEEP.map((t) => [label(t), ...cols.map((c) => coreCell(t, c)), ...GEMS.map((g) => addonCell(t, g))]),
    ),
    "",
    "## Runtimes and servers",
    "",
    "What is supported, each run in CI. The runtimes' ranges are package.json's `engines`; on each runtime,",
    "`interop-tests/package-consumers.test.ts` installs the packed tarball and runs README's first job:",
    "",
    ...table(
      ["runtime", "engines", "run as"],
      RUNTIMES.map((r) => [r.runtime, code(`${r.engine} ${r.range}`), r.from]),
    ),
    "",
    ...table(
      ["server", "from"],
      SERVERS.map((s) => [s.server, s.from]),
    ),
    "",
    "Each pass of `npm test`, on the JavaScript runtime and the server named (`interop-tests/passes.ts` says why each",
    "server runs where it does):",
    "",
    ...table(
      ["runtime", "server", "Ruby Sidekiq in", "runs"],
      PASSES_RUN.map((p) => [p.runtime, p.server, p.ruby, p.runs]),
    ),
    "",
    "## Checks",
    "",
    "The release sweep (`interop-tests/release-sweep.test.ts`, on each release from the one named):",
    "",
    ...table(
      ["check", "test", "columns"],
      Object.entries(SWEEP_CHECKS).map(([id, c]) => [
        code(id),
        `${c.title}${"since" in c ? ` (from ${c.since})` : ""}`,
        c.columns.map((x) => CORE_COLUMNS[x]).join(", "),
      ]),
    ),
    "",
    "The add-on sweep (`interop-tests/release-sweep-addons.test.ts`), one test per gem release on each Sidekiq",
    "release its gemspec allows (gem releases of one gem run in separate Ruby processes):",
    "",
    ...table(
      ["gem", "test"],
      GEMS.map((g) => [g, ADDON_CHECKS[g]]),
    ),
    "",
    "Other interop files, on Debian's releases:",
    "",
    ...table(
      ["check", "describe block", "releases", "columns"],
      INTEROP_CHECKS.map((i) => [
        code(interopKey(i)),
        `${i.describe} (${code(i.file)})`,
        i.releases.join(", "),
        i.columns.map((x) => CORE_COLUMNS[x]).join(", "),
      ]),
    ),
    "",
  ];
  return out.join("\n");
}

/** What the last sweep run left unproven: a line per check a "run" cell names that did not pass. */
export function verifySupportResults(read: (file: string) => string | undefined): string[] {
  const problems: string[] = [];
  const files = { sweep: "interop-tests/release-sweep.test.ts", addons: "interop-tests/release-sweep-addons.test.ts" };
  for (const [name, file] of Object.entries(files)) {
    const text = read(supportResultsFile(name));
    if (text === undefined) {
      problems.push(`${supportResultsFile(name)}: missing (run ${file})`);
      continue;
    }
    const r = JSON.parse(text) as SupportResults;
    for (const t of SWEEP)
      if (!r.releases.includes(t.version)) problems.push(`${t.version}: not in the last run of ${file}`);
    for (const version of r.releases) {
      const expected = name === "sweep" ? sweepChecksFor(version) : addonsFor(version).map((a) => a.folder);
      const got = new Set(r.passed[version] ?? []);
      for (const key of expected) if (!got.has(key)) problems.push(`${version}: ${key} did not pass (${file})`);
    }
  }
  return problems;
}

function main(): void {
  const path = `${ROOT}${SUPPORT_PAGE}`;
  const page = renderSupportTable();
  if (process.argv.includes("--verify")) {
    const problems = verifySupportResults((f) =>
      existsSync(`${ROOT}${f}`) ? readFileSync(`${ROOT}${f}`, "utf8") : undefined,
    );
    for (const p of problems) console.error(p);
    if (problems.length > 0) process.exit(1);
    console.log("every check the table names passed in the last sweep run");
  } else if (process.argv.includes("--check")) {
    if (!existsSync(path) || readFileSync(path, "utf8") !== page) {
      console.error(`${SUPPORT_PAGE} is stale: run npm run support:table`);
      process.exit(1);
    }
  } else writeFileSync(path, page);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
