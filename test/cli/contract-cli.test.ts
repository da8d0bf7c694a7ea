// `contract <subcommand> --help` prints that subcommand's help alone, and an
// --out file into a folder that does not exist yet is written there.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { typescriptArgv } from "../../harness/child-processes.js";

const ROOT = new URL("../../", import.meta.url);
const cli = (args: string[]) =>
  spawnSync(process.execPath, [...typescriptArgv(), "src/assembly/main.ts", ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });

describe("contract on the command line", () => {
  it("<subcommand> --help prints that subcommand's help, and no other", () => {
    const r = cli(["contract", "gen", "--help"]);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: sidekiq-bridge contract gen /);
    expect(r.stdout).toContain("gen [--out FILE] CONTRACT...");
    for (const other of ["pull --ruby", "export -r", "ruby-stubs [--out", "check --committed"])
      expect(r.stdout).not.toContain(other);
    // The command's own --help still lists them all.
    const all = cli(["contract", "--help"]);
    for (const sub of ["pull --ruby", "gen [--out", "export -r", "ruby-stubs [--out", "check --committed"])
      expect(all.stdout).toContain(sub);
  }, 120_000);

  it("gen --out into missing folders makes them, instead of a raw ENOENT", () => {
    const dir = mkdtempSync(join(tmpdir(), "contract-out-"));
    try {
      const out = join(dir, "not", "yet", "sidekiq-contract.ts");
      const contract = join(import.meta.dirname, "../contract/fixtures/shop.contract.json");
      const r = cli(["contract", "gen", "--out", out, contract]);
      expect(r.stderr).not.toContain("ENOENT");
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(out, "utf8")).toContain("SignupJob");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
