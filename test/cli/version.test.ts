// `sidekiq-bridge --version` and `<command> --version` print package.json's version;
// a worker flag's bad value is named by the flag, as every command's is.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { typescriptArgv } from "../../harness/child-processes.js";

const ROOT = new URL("../../", import.meta.url);
const VERSION = (JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string }).version;

function cli(args: string[]) {
  return spawnSync(process.execPath, [...typescriptArgv(), "src/assembly/main.ts", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("sidekiq-bridge --version", () => {
  it("prints the version at the top level and for a command, and exits 0", () => {
    for (const args of [["--version"], ["worker", "--version"], ["stats", "--version"]]) {
      const r = cli(args);
      expect(r.stdout).toBe(`${VERSION}\n`);
      expect(r.status).toBe(0);
    }
  }, 120_000);
});

describe("worker flag errors", () => {
  it("a bad --dialect or --fallback is named by its flag, before any connection (a usage error, exit 2)", () => {
    for (const [flag, value] of [
      ["--dialect", "9"],
      ["--fallback", "5"],
    ]) {
      const r = cli(["worker", flag!, value!, "--redis", "redis://127.0.0.1:1"]);
      expect(r.stderr).toMatch(
        new RegExp(`^sidekiq-bridge worker: ${flag}: .*\nRun 'sidekiq-bridge worker --help' for usage\\.\n$`),
      );
      expect(r.status).toBe(2);
    }
  }, 120_000);
});
