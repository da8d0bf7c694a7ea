// A Node add-on poller (fixtures/claim-poller.ts) in a child process, killed
// with SIGKILL at the test hook's pause point between its claim and its push.
// Shared by the claim recovery tests and the chaos scenarios.
import { spawn } from "node:child_process";
import { REPO_ROOT } from "../../harness/local-backend.js";
import type { Logger } from "../../src/core/logging/logger.js";

/** Where the poller stops: after the claim (step 1), or after storing its payload (step 2). */
export type ClaimStage = "claimed" | "prepared";

/**
 * Runs the poller with `env` until it pauses at `stage`, then kills it with
 * SIGKILL; returns its identity and the field of its in-flight claim.
 */
export async function killClaimPoller(
  target: { url: string; target: { version: string } },
  stage: ClaimStage,
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<{ identity: string; field: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "interop-tests/fixtures/claim-poller.ts"], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...env,
      REDIS_URL: target.url,
      CLAIM_DIALECT: target.target.version,
      PAUSE_CLAIM: stage,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  const exited = new Promise((r) => child.once("exit", r));
  try {
    const paused = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the poller did not pause after ${stage}:\n${log}`)), timeoutMs);
      child.stderr.on("data", (d) => {
        log += d;
        const m = /paused after \w+ (.+)\n/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once("exit", () => reject(new Error(`the poller exited before pausing:\n${log}`)));
    });
    const identity = /^identity (.+)$/m.exec(log)?.[1] ?? "";
    return { identity, field: paused };
  } finally {
    child.kill("SIGKILL");
    await exited;
  }
}

/** A logger that keeps its lines (for the failure message) and prints nothing. */
export function silentLogger(lines: string[] = []): Logger {
  const keep = (m: string) => void lines.push(m);
  return { debug: () => undefined, info: keep, warn: keep, error: keep };
}
