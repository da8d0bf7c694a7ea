// `contract pull`: runs the Ruby extractor shipped with the package
// (ruby/contract-pull.rb) inside the app with the user's command, and turns
// its one marked line into a checked contract document. The script goes on
// the command's stdin (`bundle exec ruby -`, `bin/rails runner -`), or in
// place of `{script}` when the command names it.
import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseContract, type JobContract } from "./document.js";

/** The extractor, shipped in the package's `files` (two levels above src/tools/contract/ and dist/tools/contract/). */
export const PULL_SCRIPT = fileURLToPath(new URL("../../../ruby/contract-pull.rb", import.meta.url));

const MARK = "__SIDEKIQ_BRIDGE_CONTRACT__ ";

export interface PullOptions {
  /** The shell command that runs Ruby in the app, e.g. "bundle exec ruby -". */
  ruby: string;
  /** The contract's namespace (default: the Rails app's module, else the folder name). */
  app?: string;
  /** Folders of RBS signatures (default: ./sig when present). */
  sig?: string[];
  /** Files to require first (a Sidekiq app without Rails). */
  files?: string[];
  /** Where the command runs. */
  cwd?: string;
  /** Each line the extractor reports (a class it could not read, ...). */
  onNote?: (line: string) => void;
  timeoutMs?: number;
}

/** Quotes one word for sh. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

export interface PullResult {
  contract: JobContract;
  /** What the extractor reported on stderr, line by line. */
  notes: string[];
}

/** Runs the extractor and returns the contract it printed. */
export function pullContract(opts: PullOptions): Promise<PullResult> {
  const args = [
    ...(opts.app ? ["--app", opts.app] : []),
    ...(opts.sig ?? []).flatMap((d) => ["--sig", d]),
    ...(opts.files ?? []),
  ].map(shellWord);
  const named = opts.ruby.includes("{script}");
  const command =
    `${named ? opts.ruby.replaceAll("{script}", shellWord(PULL_SCRIPT)) : opts.ruby} ${args.join(" ")}`.trim();
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const notes: string[] = [];
    let partial = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => {
      const text = partial + d.toString();
      const lines = text.split("\n");
      partial = lines.pop()!;
      for (const l of lines) note(l);
    });
    const note = (l: string) => {
      stderr += `${l}\n`;
      if (!l.startsWith("contract pull: ")) return;
      notes.push(l.slice("contract pull: ".length));
      opts.onNote?.(l);
    };
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the Ruby command did not finish within ${(opts.timeoutMs ?? 300_000) / 1000} s: ${command}`));
    }, opts.timeoutMs ?? 300_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (partial) note(partial);
      const line = stdout.split("\n").find((l) => l.startsWith(MARK));
      if (code !== 0 || line === undefined) {
        const tail = stderr.trim().split("\n").slice(-15).join("\n");
        reject(
          new Error(
            `the Ruby command ${code !== 0 ? `exited ${code}` : "printed no contract"}: ${command}${tail ? `\n${tail}` : ""}`,
          ),
        );
        return;
      }
      try {
        resolve({ contract: parseContract(JSON.parse(line.slice(MARK.length)), "the extracted contract"), notes });
      } catch (e) {
        reject(e as Error);
      }
    });
    if (named) child.stdin.end();
    // A command that exits without reading all of stdin is reported by its exit, not by EPIPE.
    else
      createReadStream(PULL_SCRIPT)
        .pipe(child.stdin)
        .on("error", () => {});
  });
}
