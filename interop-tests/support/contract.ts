// Shared by the contract interop tests: the shell command that runs Ruby
// inside a release's root filesystem (or container) in the fixtures folder,
// for `contract pull --ruby`, and the CLI run to completion.
import { inject } from "vitest";
import { chrootArgv, releaseCommand } from "../../harness/local-backend.js";
import { DOCKER_FIXTURES } from "../../harness/docker-backend.js";
import type { SidekiqTarget } from "../../harness/versions.js";
import { shellWord } from "../../src/tools/contract/pull.js";
import { startCli } from "./cli-process.js";

/** The files of ruby-fixtures/contract/ the pull requires, relative to the fixtures folder. */
export const CONTRACT_FILES = [
  "contract/jobs.rb",
  "contract/activejob.rb",
  "contract/symbol_default_job.rb",
  "contract/bad/broken_load_job.rb",
  "contract/bad/ghost_job.rb",
];

/**
 * A `--ruby` command: Ruby reading its program from stdin, in the fixtures folder
 * (or `dir` inside it), with `env`; `rubyArgs` go before the `-` (a Rails app: `-r ./config/environment`).
 */
export function rubyCommand(
  target: SidekiqTarget,
  env: Record<string, string> = {},
  { dir = "", rubyArgs = [] }: { dir?: string; rubyArgs?: string[] } = {},
): string {
  const h = inject("harness");
  if (h.backend === "docker") {
    const envs = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    const cwd = dir ? `${DOCKER_FIXTURES}/${dir}` : DOCKER_FIXTURES;
    return ["docker", "exec", "-i", "-w", cwd, ...envs, h.containers![target.service]!, "ruby", ...rubyArgs, "-"]
      .map(shellWord)
      .join(" ");
  }
  // sh -c 'cd DIR && exec ruby - "$@"' keeps the arguments the CLI appends.
  const root = h.rootfs[target.suite]!;
  const cwd = dir ? `${h.fixturesDir}/${dir}` : h.fixturesDir;
  const r = releaseCommand(root, h.fixturesDir, target, ["ruby", ...rubyArgs, "-"], env);
  const ruby = r.cmd.slice(0, -1).map(shellWord).join(" ");
  const argv = chrootArgv(root, ["sh", "-c", `cd ${cwd} && exec ${ruby} - "$@"`, "ruby"], r.env);
  return argv.map(shellWord).join(" ");
}

/** Runs the built CLI (dist/) to completion: its exit code, everything it printed, and its stderr alone. */
export async function cli(args: string[]): Promise<{ code: number | null; output: string; stderr: string }> {
  const p = startCli(args, {});
  await p.closed;
  return { code: await p.exited, output: p.output(), stderr: p.stderr() };
}
