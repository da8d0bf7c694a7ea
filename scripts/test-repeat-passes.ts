// The passes of npm test after the first: the Valkey/Node 24 pass (unit +
// interop), the Docker pass (interop), and the Bun and Deno passes (unit +
// the interop subset), in the slots of REPEAT_SLOTS (interop-tests/passes.ts):
// the slots side by side, each slot's passes one after the other. Most of a
// pass's time is spent waiting on Ruby, Redis and timers rather than on the
// CPU, so three at once keep the whole of npm test within CI's time. Each line
// is prefixed with its pass; each pass writes its own vitest report. Every
// pass runs to its end, after a failed one too; the exit code is the first
// failure's. Extra arguments (file filters) go to every pass's vitest.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { REPO_ROOT } from "../harness/local-backend.js";
import { type PassName, REPEAT_SLOTS } from "../interop-tests/passes.js";

// The CLI the interop tests spawn (dist/) is built once here, not by each
// pass's global setup at the same moment.
const built = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO_ROOT, stdio: "inherit" });
if (built.status !== 0 || !existsSync(`${REPO_ROOT}/dist/assembly/main.js`)) {
  console.error("[sidekiq-bridge] repeat passes: building dist/ failed");
  process.exit(1);
}

/** Each pass's npm script, and the name its lines are prefixed with. */
const SCRIPTS: Record<Exclude<PassName, "first">, { name: string; script: string }> = {
  repeat: { name: "valkey", script: "test:valkey" },
  docker: { name: "docker", script: "test:docker" },
  bun: { name: "bun", script: "test:bun" },
  deno: { name: "deno", script: "test:deno" },
};

function run(name: string, script: string): Promise<number> {
  const started = Date.now();
  const child = spawn("npm", ["run", "--silent", script, "--", ...process.argv.slice(2)], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SIDEKIQ_BRIDGE_DIST_BUILT: "1", NO_COLOR: "1" },
  });
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on("line", (line) => console.log(`[${name}] ${line}`));
  }
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      const minutes = ((Date.now() - started) / 60_000).toFixed(1);
      console.log(`[sidekiq-bridge] ${name} pass ended (${signal ?? `exit ${code}`}) after ${minutes} min`);
      resolve(code ?? 1);
    });
  });
}

async function runSlot(passes: readonly Exclude<PassName, "first">[]): Promise<number[]> {
  const codes: number[] = [];
  for (const pass of passes) codes.push(await run(SCRIPTS[pass].name, SCRIPTS[pass].script));
  return codes;
}

const codes = (await Promise.all(REPEAT_SLOTS.map(runSlot))).flat();
process.exit(codes.find((c) => c !== 0) ?? 0);
