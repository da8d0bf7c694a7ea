// README's code runs as written: every block marked ```ts runnable=<name> is
// type-checked against the package's own types and run (by tsx, importing
// "sidekiq-bridge" as a user would, through the export map to dist/) on a real
// Redis with real Ruby Sidekiq: Ruby runs what the enqueue example pushes and
// pushes the job the worker example runs. A runnable block without a check
// here, or a check without its block, fails the suite. Every other code block
// of README and the docs is type-checked by test/docs/snippets.test.ts. The
// first job also runs from the packed tarball on each supported runtime
// (package-consumers.test.ts).
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import { describeEachSidekiq, waitFor, type SidekiqContext } from "./support/harness.js";
import { readmeBlocks } from "./support/readme-blocks.js";

const BLOCKS = readmeBlocks();
const TSX = join(REPO_ROOT, "node_modules/tsx/dist/cli.mjs");
const TSC = join(REPO_ROOT, "node_modules/typescript/bin/tsc");

let dir: string;

beforeAll(() => {
  // A project outside the repo that has the package under node_modules, as after npm install.
  dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-readme-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(REPO_ROOT, join(dir, "node_modules/sidekiq-bridge"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ private: true, type: "module" }));
  for (const [name, code] of BLOCKS) writeFileSync(join(dir, `${name}.mts`), code);
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Running {
  out: () => string;
  exited: Promise<number | null>;
  kill: (signal: NodeJS.Signals) => void;
}

function runBlock(name: string, url: string): Running {
  const child = spawn(process.execPath, [TSX, join(dir, `${name}.mts`)], {
    cwd: dir,
    env: { ...process.env, REDIS_URL: url },
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code) => {
      if (code !== 0) console.error(`README block ${name} exited ${code}:\n${out}${err}`);
      resolve(code);
    }),
  );
  return { out: () => out, exited, kill: (s) => child.kill(s) };
}

const CHECKS: Record<string, (sk: SidekiqContext) => Promise<void>> = {
  // An empty Redis, no Ruby process: the program prints and exits by itself.
  "first-job": async (sk) => {
    await sk.redis.flushdb();
    const run = runBlock("first-job", sk.url);
    expect(await run.exited).toBe(0);
    expect(run.out()).toBe("hello world\n");
  },
  // Ruby Sidekiq runs what Node enqueued; the scheduled one waits in Ruby's ScheduledSet.
  enqueue: async (sk) => {
    await sk.redis.flushdb();
    const ruby = await sk.startSidekiq({ queues: ["critical", "mailers"], require: "lib/readme_jobs.rb" });
    try {
      const run = runBlock("enqueue", sk.url);
      expect(await run.exited).toBe(0);
      const received = await waitFor("Ruby to run three WelcomeEmailJobs", async () => {
        const l = await sk.redis.lrange("bridge:received", 0, -1);
        return l.length >= 3 && l;
      });
      const args = received.map((e) => (JSON.parse(e) as { class: string; args_json: string }).args_json).sort();
      expect(args).toEqual(['[1,"a"]', '[2,"b"]', '[42,"hello"]']);
      const scheduled = await sk.ruby<Array<[string, unknown[], string]>>(
        "Sidekiq::ScheduledSet.new.map { |j| [j.klass, j.args, j.queue] }",
      );
      expect(scheduled).toEqual([["WelcomeEmailJob", [42, "reminder"], "mailers"]]);
    } finally {
      await ruby.stop();
    }
  },
  // Ruby pushes the job; the Node worker from README runs it and stops on TERM with exit 0.
  worker: async (sk) => {
    await sk.redis.flushdb();
    const run = runBlock("worker", sk.url);
    try {
      // No Ruby process is live, so the example's autoFallback picks the dialect; its heartbeat says it is up.
      await waitFor("the README worker's heartbeat", async () => (await sk.redis.scard("processes")) > 0);
      const jid = await sk.ruby<string>(
        'Sidekiq::Client.push("class" => "WelcomeEmailJob", "args" => [42, "hello"], "queue" => "critical")',
      );
      await waitFor("the README worker to run the job", async () => run.out().includes(`welcome 42 hello ${jid}`));
    } finally {
      run.kill("SIGTERM");
    }
    expect(await run.exited).toBe(0);
  },
};

it("every runnable README block has a check here, and every check its block", () => {
  expect([...BLOCKS.keys()].sort()).toEqual(Object.keys(CHECKS).sort());
});

it("the runnable README blocks type-check against the package's types", () => {
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "ES2022",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        typeRoots: [join(REPO_ROOT, "node_modules/@types")],
        types: ["node"],
      },
      include: ["*.mts"],
    }),
  );
  const r = spawnSync(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: dir, encoding: "utf8" });
  expect(r.stdout + r.stderr).toBe("");
  expect(r.status).toBe(0);
}, 120_000);

describeEachSidekiq(
  "README examples",
  (sk) => {
    for (const name of Object.keys(CHECKS)) it(`README's ${name} example runs as written`, () => CHECKS[name]!(sk));
  },
  (t) => t.version.startsWith("8."),
);
