// The package as users get it: `npm pack` from a copy of this checkout (its
// prepack builds dist/), the tarball installed into throwaway projects, each
// importing the package its own way (ESM, CommonJS require, TypeScript under
// nodenext as ESM and as CommonJS, TypeScript with bundler resolution), type
// checked with this repo's tsc and run against a real Redis: a Client pushes a
// job, a Worker runs it, both close, and the process exits on its own. From the
// same install, README's first job runs as README writes it on every runtime
// docs/SUPPORT.md lists (Node 20 and 24, Bun, Deno), each run reporting the
// runtime that ran it; and every relative link of the shipped Markdown names a
// file of the package.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import type { RedisServer } from "../harness/redis-server.js";
import { startServer } from "../harness/servers.js";
import { brokenLinks } from "../test/docs/links.js";
import { readmeBlocks } from "./support/readme-blocks.js";
import { RUNTIMES, type RuntimeId } from "./support/support-matrix.js";

const TSC = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
const VERSION = (await import("../package.json", { with: { type: "json" } })).default.version;

let tmp: string;
let gitStatus: string;
let tarball: string;
let files: string[];
let app: string;
let redis: RedisServer;

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
  timeout = 300_000,
): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, ...env } });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")} in ${cwd}: exit ${r.status} ${r.signal ?? ""}\n${r.stdout}${r.stderr}`);
  return r;
}

/** The program each consumer runs: push with Client, run with Worker, close both, print what the handler saw. */
function program(kind: string, typed: boolean): string {
  const t = (s: string) => (typed ? s : "");
  return `
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
async function main()${t(": Promise<void>")} {
  const redis = process.env.REDIS_URL${t("!")};
  const client = new Client({ redis, dialect: 8 });
  const worker = new Worker({ redis, dialect: 8, queues: ["consumer-${kind}"], concurrency: 1, logger: quiet });
  const seen = new Promise${t("<unknown[]>")}((resolve) => {
    worker.register${t("<[string, number]>")}("ConsumerJob", async (args${t(": [string, number]")}) => resolve(args));
  });
  await worker.start();
  await client.job${t("<[string, number]>")}("ConsumerJob", { queue: "consumer-${kind}" }).performAsync("hello", 42);
  const args = await seen;
  const stopped = await worker.stop();
  await client.close();
  const record = JobRecord.parse('{"class":"X","args":[1],"jid":"0123456789abcdef01234567","created_at":1.5}');
  // The entry points the root's migration and add-on names moved to.
  const moved = [moveJobs, parseCron, uniqueJobsClient, schedulerSettingsFromSidekiqYml].map((f) => typeof f).join();
  console.log(JSON.stringify({ args, clean: stopped.clean, wire: record.get("class"), web: typeof createWebHandler, moved }));
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
`;
}

const ESM_IMPORTS = `import { Client, Worker } from "sidekiq-bridge";
import { JobRecord } from "sidekiq-bridge/wire";
import { createWebHandler } from "sidekiq-bridge/web";
import { moveJobs } from "sidekiq-bridge/migration";
import { parseCron } from "sidekiq-bridge/sidekiq-cron";
import { uniqueJobsClient } from "sidekiq-bridge/sidekiq-unique-jobs";
import { schedulerSettingsFromSidekiqYml } from "sidekiq-bridge/sidekiq-scheduler";
`;
const CJS_REQUIRES = `const { Client, Worker } = require("sidekiq-bridge");
const { JobRecord } = require("sidekiq-bridge/wire");
const { createWebHandler } = require("sidekiq-bridge/web");
const { moveJobs } = require("sidekiq-bridge/migration");
const { parseCron } = require("sidekiq-bridge/sidekiq-cron");
const { uniqueJobsClient } = require("sidekiq-bridge/sidekiq-unique-jobs");
const { schedulerSettingsFromSidekiqYml } = require("sidekiq-bridge/sidekiq-scheduler");
`;

function tsconfig(module: string, moduleResolution: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    compilerOptions: {
      module,
      moduleResolution,
      target: "ES2022",
      strict: true,
      // Type-check the package's declarations too, not only this program.
      skipLibCheck: false,
      typeRoots: [join(REPO_ROOT, "node_modules/@types")],
      types: ["node"],
      outDir: "out",
      ...extra,
    },
    include: ["main.ts"],
  });
}

interface Consumer {
  dir: string;
  type: "module" | "commonjs";
  file: string;
  source: string;
  tsconfig?: string;
  /** What node runs (absent: type-check only). */
  entry?: string;
}

const CONSUMERS: Consumer[] = [
  { dir: "esm", type: "module", file: "main.js", source: ESM_IMPORTS + program("esm", false), entry: "main.js" },
  { dir: "cjs", type: "commonjs", file: "main.js", source: CJS_REQUIRES + program("cjs", false), entry: "main.js" },
  {
    dir: "ts-nodenext-esm",
    type: "module",
    file: "main.ts",
    source: ESM_IMPORTS + program("ts-esm", true),
    tsconfig: tsconfig("nodenext", "nodenext"),
    entry: "out/main.js",
  },
  {
    dir: "ts-nodenext-cjs",
    type: "commonjs",
    file: "main.ts",
    source: ESM_IMPORTS + program("ts-cjs", true),
    tsconfig: tsconfig("nodenext", "nodenext"),
    entry: "out/main.js",
  },
  {
    dir: "ts-bundler",
    type: "module",
    file: "main.ts",
    source: ESM_IMPORTS + program("ts-bundler", true),
    tsconfig: tsconfig("esnext", "bundler", { noEmit: true }),
  },
];

/**
 * README's first job as README writes it, with one statement after it
 * printing the runtime that ran it: as TypeScript, which Bun and Deno run, and
 * as TypeScript's output for Node (20 strips no types; Debian builds 24 without).
 */
function writeReadmeFirstJob(dir: string): void {
  const code = readmeBlocks().get("first-job");
  if (code === undefined) throw new Error("README has no ```ts runnable=first-job block");
  const source = `${code}
// Added by the test: the runtime that ran the job above, as [engine, release].
const runtime = globalThis as { Bun?: { version: string }; Deno?: { version: { deno: string } } };
console.log(JSON.stringify(runtime.Deno ? ["deno", runtime.Deno.version.deno] : runtime.Bun ? ["bun", runtime.Bun.version] : ["node", process.versions.node]));
`;
  mkdirSync(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-first-job", private: true, type: "module" }));
  writeFileSync(join(dir, "first-job.ts"), source);
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  writeFileSync(join(dir, "first-job.js"), js.outputText);
}

/** How each runtime of docs/SUPPORT.md runs README's first job from the app's folder. */
const RUN_FIRST_JOB: Record<RuntimeId, [string, string[]]> = {
  node20: [process.execPath, ["first-job.js"]],
  node24: [join(REPO_ROOT, "scripts/node24"), ["first-job.js"]],
  bun: [join(REPO_ROOT, "scripts/bun"), ["first-job.ts"]],
  deno: [join(REPO_ROOT, "node_modules/@deno/linux-x64-glibc/deno"), ["run", "-A", "first-job.ts"]],
};

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "sidekiq-bridge-package-"));
  // A copy of the checkout (tracked and new files, as a clean clone has them),
  // so prepack's clean build never touches this repo's dist/ under other suites.
  const copy = join(tmp, "checkout");
  gitStatus = run("git", ["status", "--porcelain"], REPO_ROOT).stdout;
  const listed = run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], REPO_ROOT);
  // A work tree whose node_modules is a symlink lists it (.gitignore's node_modules/ matches directories only).
  for (const f of listed.stdout.split("\0").filter((f) => f && f !== "node_modules")) {
    mkdirSync(dirname(join(copy, f)), { recursive: true });
    try {
      cpSync(join(REPO_ROOT, f), join(copy, f));
    } catch {} // a file deleted in the work tree but not yet in the index
  }
  symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
  const packed = run("npm", ["pack", "--json", "--pack-destination", tmp], copy);
  const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(tmp, info[0]!.filename);
  files = info[0]!.files.map((f) => f.path);

  app = join(tmp, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumers", private: true }));
  // The dependencies come from npm's cache where it has them, else from the registry as for npm ci: npm ci
  // caches their tarballs but not the registry's metadata that resolving a version range needs. Nothing in
  // them needs its install script.
  run("npm", ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", tarball], app);
  for (const c of CONSUMERS) {
    const dir = join(app, c.dir);
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: c.dir, private: true, type: c.type }));
    writeFileSync(join(dir, c.file), c.source);
    if (c.tsconfig) writeFileSync(join(dir, "tsconfig.json"), c.tsconfig);
  }
  // The testing example, its runners taken from this repo's node_modules (nothing downloaded).
  cpSync(join(copy, "examples/testing-consumer"), join(app, "testing-consumer"), { recursive: true });
  for (const dep of ["vitest", "jest", "@jest/globals", "expect"]) {
    mkdirSync(dirname(join(app, "node_modules", dep)), { recursive: true });
    symlinkSync(join(REPO_ROOT, "node_modules", dep), join(app, "node_modules", dep));
  }
  writeReadmeFirstJob(join(app, "readme-first-job"));
  redis = await startServer();
}, 900_000);

afterAll(async () => {
  await redis?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the packed tarball", () => {
  it("holds the build, the schemas, README, LICENSE, CHANGELOG and the docs, and no sources, tests or source maps", () => {
    for (const f of [
      "package.json",
      "README.md",
      "LICENSE",
      "CHANGELOG.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/core/wire/public.js",
      "dist/assembly/web.js",
      "dist/assembly/main.js",
      "schema/dialects.json",
      "schema/v8/job.schema.json",
      "docs/OPERATING.md",
      "docs/api/sidekiq-bridge.md",
    ])
      expect(files).toContain(f);
    // The docs ship as Markdown, with the screenshots and the results they link to.
    const docs = /^(docs\/(api\/)?[^/]+\.md|docs\/screenshots\/[\w-]+\.png|bench\/(results\/)?[\w-]+\.md)$/;
    const stray = files.filter(
      (f) =>
        f.endsWith(".map") ||
        (/^(src|test|interop-tests|harness|scripts|bench|chaos|ruby-fixtures|docs)\//.test(f) && !docs.test(f)),
    );
    expect(stray).toEqual([]);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("is packed from a copy: the checkout's git status is as it was", () => {
    expect(run("git", ["status", "--porcelain"], REPO_ROOT).stdout).toBe(gitStatus);
    // What prepack keeps aside is ignored by git: a pack that never restored it would leave it here.
    expect(existsSync(join(REPO_ROOT, ".package.json.unpacked"))).toBe(false);
  });

  it("installed, every relative link of its README and shipped Markdown names a file of the package, and a heading of it", () => {
    const markdown = files.filter((f) => f.endsWith(".md"));
    expect(markdown).toEqual(expect.arrayContaining(["README.md", "docs/OPERATING.md", "docs/WEB.md"]));
    expect(brokenLinks(join(app, "node_modules/sidekiq-bridge"), markdown)).toEqual([]);
  });

  it("installed, its package.json has no install-time script and no script naming a file it lacks", () => {
    const installed = join(app, "node_modules/sidekiq-bridge");
    const scripts = (JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { scripts?: object }).scripts;
    const named = Object.entries(scripts ?? {}).flatMap(([name, line]) =>
      String(line)
        .split(/\s+/)
        .filter((word) => /\//.test(word) || /\.[cm]?[jt]s$/.test(word))
        .map((path) => ({ name, path })),
    );
    expect(named.filter(({ path }) => !existsSync(join(installed, path)))).toEqual([]);
    expect(Object.keys(scripts ?? {}).filter((s) => /^(pre|post)?(install|prepare)$/.test(s))).toEqual([]);
  });

  it("installs a working sidekiq-bridge command: --version prints the package's version", () => {
    const r = run(join(app, "node_modules/.bin/sidekiq-bridge"), ["--version"], app);
    expect(r.stdout.trim()).toBe(VERSION);
  });

  it("its worker, without a dialect on a Redis with no Ruby process, exits 1 naming the CLI's --dialect and --fallback", () => {
    const r = spawnSync(join(app, "node_modules/.bin/sidekiq-bridge"), ["worker", "--redis", redis.url], {
      cwd: app,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^sidekiq-bridge: --dialect auto found no live Ruby Sidekiq process/);
    expect(r.stderr).toContain("--fallback");
    expect(r.stderr).not.toContain("autoFallback");
  });

  it("exposes only its entry points: an internal module is not importable", () => {
    const r = spawnSync(process.execPath, ["-e", 'require("sidekiq-bridge/dist/core/server/fetch/fetch.js")'], {
      cwd: app,
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
    const names = run(process.execPath, ["-e", 'console.log(Object.keys(require("sidekiq-bridge")).join(","))'], app);
    for (const internal of ["processJob", "BasicFetch", "wipKey", "chunks", "Poller"])
      expect(names.stdout.split(",")).not.toContain(internal);
  });

  for (const c of CONSUMERS) {
    it(`${c.dir}: ${c.tsconfig ? "type-checks with tsc" : "loads"}${c.entry ? " and runs a job through Redis with Client and Worker, then exits by itself" : ""}`, () => {
      const dir = join(app, c.dir);
      if (c.tsconfig) run(process.execPath, [TSC, "-p", "tsconfig.json"], dir);
      if (!c.entry) {
        expect(readdirSync(dir)).not.toContain("out");
        return;
      }
      // No process.exit on success: the exit proves Client and Worker left nothing open.
      const r = run(process.execPath, [c.entry], dir, { REDIS_URL: redis.url });
      expect(JSON.parse(r.stdout.trim())).toEqual({
        args: ["hello", 42],
        clean: true,
        wire: "X",
        web: "function",
        moved: "function,function,function,function",
      });
    }, 240_000);
  }
});

describe("README's first job, from the installed tarball, on each supported runtime", () => {
  for (const r of RUNTIMES)
    it(`${r.runtime}: prints what README says and exits by itself, and reports ${r.engine} ${r.line}x`, () => {
      const [cmd, args] = RUN_FIRST_JOB[r.id];
      // A program that does not exit by itself is killed (SIGTERM) and fails here.
      const env = { REDIS_URL: redis.url, DENO_NO_UPDATE_CHECK: "1" };
      const out = run(cmd, args, join(app, "readme-first-job"), env, 60_000).stdout.split("\n");
      expect(out[0]).toBe("hello world");
      const [engine, release] = JSON.parse(out[1]!) as [string, string];
      expect(engine).toBe(r.engine);
      expect(release.startsWith(r.line), `${r.runtime} ran ${engine} ${release}`).toBe(true);
      expect(out.slice(2)).toEqual([""]);
    }, 120_000);
});

// examples/testing-consumer: an app's own test suite on sidekiq-bridge/testing,
// run by vitest and by jest (plain ES modules, no transform) with nothing
// listening at its Redis URL; then, with the code under test enqueuing the
// wrong class, arguments or queue, each runner must fail.
describe("the testing example, under vitest and jest, with no Redis", () => {
  const dir = () => join(app, "testing-consumer");
  /** The runners' environment: nothing at the Redis URL, and none of this vitest's own variables. */
  const env = () => {
    const e: NodeJS.ProcessEnv = { REDIS_URL: "redis://127.0.0.1:1", CI: "true" };
    for (const [k, v] of Object.entries(process.env)) if (!/^(VITEST|NODE_OPTIONS$|REDIS_URL$)/.test(k)) e[k] ??= v;
    return e;
  };
  const RUNNERS = {
    vitest: [join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "--root", "."],
    jest: ["--experimental-vm-modules", join(REPO_ROOT, "node_modules/jest/bin/jest.js"), "--ci"],
  } as const;
  const runSuite = (runner: keyof typeof RUNNERS) =>
    spawnSync(process.execPath, [...RUNNERS[runner]], { cwd: dir(), encoding: "utf8", timeout: 120_000, env: env() });

  for (const runner of ["vitest", "jest"] as const)
    it(`${runner}: the example suite passes`, () => {
      const r = runSuite(runner);
      expect(r.status, r.stdout + r.stderr).toBe(0);
      expect(r.stdout + r.stderr).toMatch(/4 passed/);
    }, 120_000);

  it("the matchers type-check on vitest's expect and on jest's", () => {
    for (const check of ["vitest", "jest"]) {
      const config = JSON.parse(tsconfig("nodenext", "nodenext", { noEmit: true })) as { include: string[] };
      config.include = [`types/${check}.check.ts`];
      writeFileSync(join(dir(), "tsconfig.json"), JSON.stringify(config));
      run(process.execPath, [TSC, "-p", "tsconfig.json"], dir());
    }
  }, 120_000);

  const WRONG = {
    class: ['"WelcomeEmailJob"', '"WelcomeMailJob"'],
    arguments: ["performAsync(user.id, user.email)", "performAsync(user.email, user.id)"],
    queue: ['queue: "mailers"', 'queue: "default"'],
  } as const;
  for (const [what, [right, wrong]] of Object.entries(WRONG))
    it(`fails under both runners when the code enqueues the wrong ${what}`, () => {
      const file = join(dir(), "src/signup.mjs");
      const source = readFileSync(file, "utf8");
      expect(source).toContain(right);
      writeFileSync(file, source.replace(right, wrong));
      try {
        for (const runner of ["vitest", "jest"] as const) {
          const r = runSuite(runner);
          expect(r.status, `${runner} passed on the wrong ${what}`).not.toBe(0);
          expect(r.stdout + r.stderr).toContain("expected an enqueued job with WelcomeEmailJob");
        }
      } finally {
        writeFileSync(file, source);
      }
    }, 240_000);
});
