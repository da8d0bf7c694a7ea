// `sidekiq-bridge --version` and `<command> --version` print package.json's version;
// a worker flag's bad value is named by the flag; `worker --json` logs one JSON object per line.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { jsonLogger } from "../../src/cli/json-logger.js";

const ROOT = new URL("../../", import.meta.url);
const VERSION = (JSON.parse(readFileSync(new URL("package.json", ROOT), "utf8")) as { version: string }).version;

function cli(args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
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
  it("a bad --dialect or --fallback is named by its flag, before any connection (exit 1)", () => {
    for (const [flag, value] of [
      ["--dialect", "9"],
      ["--fallback", "5"],
    ]) {
      const r = cli(["worker", flag!, value!, "--redis", "redis://127.0.0.1:1"]);
      expect(r.stderr).toMatch(new RegExp(`^sidekiq-bridge: ${flag}: `));
      expect(r.status).toBe(1);
    }
  }, 120_000);
});

describe("worker --json", () => {
  it("writes one JSON object per event, with time, level, pid, message and context (bigints as strings)", () => {
    const lines: string[] = [];
    jsonLogger((l) => lines.push(l)).warn("Redis connection lost", { host: "127.0.0.1", n: 12345678901234567890n });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    const record = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(record).toMatchObject({ level: "warn", pid: process.pid, msg: "Redis connection lost", host: "127.0.0.1" });
    expect(record.n).toBe("12345678901234567890");
    expect(new Date(record.time as string).toISOString()).toBe(record.time);
  });
});
