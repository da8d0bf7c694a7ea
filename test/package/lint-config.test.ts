// What npm run lint (part of npm test) holds the code to, so a change to
// eslint.config.js cannot quietly drop it: the type-checked rules on every
// TypeScript file, and a warning on files in src/ past 400 lines (a prompt to
// split along an invariant, not a limit to squeeze under), which no comment
// may switch off.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const eslint = new ESLint({ cwd: ROOT });

const TYPE_CHECKED = [
  "@typescript-eslint/no-floating-promises",
  "@typescript-eslint/no-misused-promises",
  "@typescript-eslint/await-thenable",
  "@typescript-eslint/switch-exhaustiveness-check",
];

/** The rule's severity (2 = error) and options as ESLint resolves them for a file. */
async function rule(file: string, name: string): Promise<unknown> {
  // undefined for a file ESLint ignores altogether (the generated types)
  const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> } | undefined;
  return config?.rules?.[name];
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

describe("lint configuration", () => {
  // Loading the config imports typescript-eslint: seconds on a busy machine.
  beforeAll(() => eslint.calculateConfigForFile("src/index.ts"), 120_000);

  it.each([
    "src/core/server/manager.ts",
    "test/package/lint-config.test.ts",
    "interop-tests/support/harness.ts",
    "bench/main.ts",
    "chaos/main.ts",
    "scripts/api-report.ts",
    "harness/redis-server.ts",
  ])("%s gets the type-checked rules", async (file) => {
    for (const name of TYPE_CHECKED)
      expect([name, ((await rule(file, name)) as unknown[] | undefined)?.[0]]).toEqual([name, 2]);
  });

  it("a file in src/ past 400 lines is warned about, blank lines and comments counted; generated types and the gem's Lua are exempt", async () => {
    expect(await rule("src/core/server/manager.ts", "max-lines")).toEqual([
      1,
      { max: 400, skipBlankLines: false, skipComments: false },
    ]);
    for (const exempt of [
      "src/core/wire/generated/index.ts",
      "src/addons/sidekiq-unique-jobs/lua-v8.ts",
      "src/addons/sidekiq-unique-jobs/lua-v9.ts",
    ])
      expect([exempt, await rule(exempt, "max-lines")]).toEqual([exempt, undefined]);
  });

  it("no comment in src/ switches max-lines off or changes it", () => {
    const comments = files(join(ROOT, "src"))
      .filter((f) => /\.[cm]?[jt]s$/.test(f))
      .flatMap((f) =>
        readFileSync(f, "utf8")
          .split("\n")
          .flatMap((line, i) =>
            /eslint(-disable|-enable)?\b[^\n]*max-lines/.test(line) ? [`${relative(ROOT, f)}:${i + 1}`] : [],
          ),
      );
    expect(comments).toEqual([]);
  });
});
