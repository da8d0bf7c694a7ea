// A Client whose options are refused throws before it opens a connection: a
// script that catches the error exits on its own, with nothing left open.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { evalTypescriptArgv } from "../../harness/child-processes.js";
import { useRedis } from "../support/use-redis.js";

describe("a Client with a bad option", () => {
  const t = useRedis();

  for (const [what, options] of [
    ["dialect 99", "{ dialect: 99 }"],
    ["an unknown contract mode", '{ dialect: 8, contract: { mode: "loud", contracts: [] } }'],
  ] as const) {
    it(`${what}: the constructor throws and a script that catches it exits by itself`, async () => {
      const script = `
        import { Client } from "./src/core/client/client.ts";
        try { new Client({ redis: ${JSON.stringify(t.server.url)}, ...${options} }); console.log("built"); }
        catch (e) { console.log("refused: " + e.name); }`;
      // Killed (and the test failed) if a connection left open keeps it alive.
      const child = spawn(process.execPath, evalTypescriptArgv(script), {
        stdio: ["ignore", "pipe", "pipe"],
        timeout: 20_000,
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d));
      const code = await new Promise<number | null>((r) => child.once("exit", r));
      expect(out).toMatch(/^refused: /);
      expect(code).toBe(0);
    }, 30_000);
  }
});
