// docs/SUPPORT.md cannot drift from what the sweeps check: the page is what
// scripts/support-table.ts renders from interop-tests/support/support-matrix.ts,
// the sweep files declare their tests only through that module (so a test
// renamed, added or dropped there changes the page), the rules and interop
// blocks it names exist, --verify refuses a sweep run that left a check
// the page names unpassed, and package.json's engines and README's Install
// say the runtimes and servers the page lists.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SWEEP } from "../../harness/versions.js";
import {
  addonsFor,
  enginesOf,
  INTEROP_CHECKS,
  PASSES_RUN,
  RUNTIMES,
  SERVERS,
  SOURCE_RULES,
  SWEEP_CHECKS,
  sweepChecksFor,
} from "../../interop-tests/support/support-matrix.js";
import { renderSupportTable, SUPPORT_PAGE, verifySupportResults } from "../../scripts/support-table.js";
import { releaseRules } from "../../src/core/wire/release-rules.js";
import { ROOT } from "./snippets.js";

const read = (f: string) => readFileSync(join(ROOT, f), "utf8");
/** The file's text without comments, so a commented-out `it(` neither counts nor hides. */
const codeOf = (f: string) => read(f).replace(/^\s*\/\/.*$/gm, "");

describe("docs/SUPPORT.md", () => {
  it("is what npm run support:table renders from support-matrix.ts", () => {
    expect(read(SUPPORT_PAGE), "stale: run npm run support:table").toBe(renderSupportTable());
  });

  it("package.json's engines are the supported runtimes' ranges, and README's Install names each runtime and server", () => {
    expect((JSON.parse(read("package.json")) as { engines: unknown }).engines).toEqual(enginesOf(RUNTIMES));
    expect(enginesOf([...RUNTIMES, { engine: "node", range: "^26.0.0" }]).node).toBe("^20.19.0 || ^24.0.0 || ^26.0.0");
    const install = read("README.md")
      .split(/^## /m)
      .find((s) => s.startsWith("Install\n"))!;
    for (const name of [...RUNTIMES.map((r) => r.runtime), ...SERVERS.map((s) => s.server)])
      expect(install, `README's Install does not name ${name}`).toContain(name);
    // Each server is the server of one of npm test's passes.
    for (const s of SERVERS) expect(PASSES_RUN.filter((p) => p.server.startsWith(`${s.server} `))).not.toEqual([]);
  });

  it("the release sweep declares exactly the checks of SWEEP_CHECKS, each through sweepIt", () => {
    const text = codeOf("interop-tests/release-sweep.test.ts");
    const ids = [...text.matchAll(/sweepIt\(\s*record,\s*version,\s*"(\w+)"/g)].map((m) => m[1]);
    expect(ids.sort()).toEqual(Object.keys(SWEEP_CHECKS).sort());
    expect(text).not.toMatch(/\b(it|test)(\.\w+)*\(/);
  });

  it("the add-on sweep titles every gem test from the mapping", () => {
    const text = codeOf("interop-tests/release-sweep-addons.test.ts");
    const its = [...text.matchAll(/\b(?:it|test)(?:\.\w+)*\(\s*([^,]+),/g)].map((m) => m[1]!.trim());
    // The gemspec comparison, and one test per gem release.
    expect(its).toEqual([
      '"the Sidekiq ranges committed in support-matrix.ts are the gemspecs\' own"',
      "addonTitle(a)",
    ]);
  });

  it("names rules that release-rules.ts has, and interop blocks that exist", () => {
    const rules = releaseRules("8.1.7") as unknown as Record<string, Record<string, unknown>>;
    for (const path of Object.values(SOURCE_RULES).flat()) {
      const [group, rule] = path.split(".");
      expect(rules[group!], path).toBeTypeOf("object");
      if (rule) expect(rule in rules[group!]!, path).toBe(true);
    }
    for (const i of INTEROP_CHECKS) {
      expect(existsSync(join(ROOT, i.file)), i.file).toBe(true);
      expect(read(i.file), `${i.file}: ${i.describe}`).toContain(JSON.stringify(i.describe));
      for (const v of i.releases)
        expect(
          SWEEP.some((t) => t.version === v && !t.release),
          v,
        ).toBe(true);
    }
  });

  it("--verify names each check a run cell claims that the last sweep run did not pass", () => {
    const versions = SWEEP.map((t) => t.version);
    const sweep = { releases: versions, passed: Object.fromEntries(versions.map((v) => [v, sweepChecksFor(v)])) };
    const addons = {
      releases: versions.filter((v) => v !== "7.2.4"),
      passed: Object.fromEntries(
        versions.map((v) => [
          v,
          addonsFor(v).flatMap((a) => (v === "8.1.7" && a.gem === "sidekiq-cron" ? [] : [a.folder])),
        ]),
      ),
    };
    const files: Record<string, string> = {
      ".vitest-results-support-sweep.json": JSON.stringify(sweep),
      ".vitest-results-support-addons.json": JSON.stringify(addons),
    };
    expect(verifySupportResults((f) => files[f])).toEqual([
      "7.2.4: not in the last run of interop-tests/release-sweep-addons.test.ts",
      "8.1.7: sidekiq-cron-2.3.1 did not pass (interop-tests/release-sweep-addons.test.ts)",
    ]);
    sweep.passed["8.1.7"] = sweep.passed["8.1.7"]!.filter((id) => id !== "heartbeat");
    files[".vitest-results-support-sweep.json"] = JSON.stringify(sweep);
    delete files[".vitest-results-support-addons.json"];
    expect(verifySupportResults((f) => files[f])).toEqual([
      "8.1.7: heartbeat did not pass (interop-tests/release-sweep.test.ts)",
      ".vitest-results-support-addons.json: missing (run interop-tests/release-sweep-addons.test.ts)",
    ]);
  });
});
