// signalChild: after it, the exit code a test reads is the one the child
// exited with, on each runtime npm test runs this file on (Node, Bun, Deno);
// the tests that read a clean stop's exit 0 after TERM rely on it, so a child
// that dies of the signal must still read as killed.
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { signalChild } from "../../harness/child-processes.js";

/** Runs a shell script that prints "ready" once it can take the signal; TERM to it, how its exit reads. */
async function terminated(script: string): Promise<[number | null, NodeJS.Signals | null]> {
  const child = spawn("sh", ["-c", script], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) =>
    child.on("exit", (code, signal) => r([code, signal])),
  );
  await new Promise<void>((r) => child.stdout.on("data", (d) => String(d).includes("ready") && r()));
  signalChild(child, "SIGTERM");
  return exited;
}

describe("signalChild", () => {
  it.each([0, 3])("TERM to a child whose handler exits %i reads as that exit code", async (code) => {
    // The handler also stops the background sleep the shell waits on.
    const script = `trap 'kill $!; exit ${code}' TERM; echo ready; sleep 600 & wait`;
    expect(await terminated(script)).toEqual([code, null]);
  });

  it("a child without a TERM handler reads as killed by TERM", async () => {
    expect(await terminated("echo ready; exec sleep 600")).toEqual([null, "SIGTERM"]);
  });
});
