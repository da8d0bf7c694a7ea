// The two sides of `npm run bench:ops`, each measured against the same Redis:
//
//   ours   the dashboard as operators run it (`sidekiq-bridge web`, dist/, in
//          its own process, so its peak RSS is its own: VmHWM from /proc),
//          timed over loopback HTTP to the last byte; the CLI as a whole
//          process (/usr/bin/time: wall time and max RSS).
//   Ruby   Sidekiq 8.1.7's Web UI and API in the forky root filesystem the
//          interop tests use (ruby-ops.rb): pages rendered in-process with
//          Rack::MockRequest, API calls in-process.
//
// The Redis work of one request is INFO commandstats' calls and usec around
// it (every command Redis ran, from any connection).
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { chrootArgv, runCaptured } from "../../harness/local-backend.js";
import { prepareRootfs } from "../../harness/prepare.js";
import { MATRIX } from "../../harness/versions.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "../..");
const CLI = join(REPO, "dist/assembly/main.js");

/** argv that runs the built CLI (this tree's, or the one under `dist`) as its installed bin does: node with the flags of its shebang. */
export function cliArgv(...args: string[]): string[] {
  return cliArgvOf(CLI, args);
}

function cliArgvOf(cli: string, args: string[]): string[] {
  const shebang = readFileSync(cli, "utf8").split("\n", 1)[0]!;
  const flags = /^#!.*\bnode\b(.*)$/.exec(shebang)?.[1]?.trim().split(/\s+/).filter(Boolean) ?? [];
  return [process.execPath, ...flags, cli, ...args];
}

export interface RedisWork {
  calls: number;
  usec: number;
}

export interface Timing {
  median_ms: number;
  runs: number;
  work: RedisWork;
  bytes?: number;
  rss_kb?: number;
}

/** Calls and usec of every command Redis ran during `fn` (the bench's own INFO/CONFIG left out). */
export async function redisWork<T>(redis: Redis, fn: () => Promise<T>): Promise<{ work: RedisWork; value: T }> {
  await redis.config("RESETSTAT");
  const value = await fn();
  const text = await redis.info("commandstats");
  const work = { calls: 0, usec: 0 };
  for (const line of text.split(/\r?\n/)) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (!m || ["info", "config", "config|resetstat"].includes(m[1]!)) continue;
    work.calls += Number(m[2]);
    work.usec += Number(m[3]);
  }
  return { work, value };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** Builds dist/ (what operators install); type errors elsewhere in the tree are printed, not fatal, as long as it emits. */
export function buildDist(): void {
  const r = spawnSync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: REPO, encoding: "utf8" });
  if (r.status !== 0) console.warn(`tsc reported errors (dist/ is still emitted):\n${r.stdout.slice(0, 2000)}`);
}

/** `sidekiq-bridge web` in its own process on the bench's Redis. */
export class Dashboard {
  private constructor(
    readonly url: string,
    private readonly child: ReturnType<typeof spawn>,
  ) {}

  /** From this tree's dist/, or from another build's (`dist`: an A/B of a change); `nodeFlags` after the bin's own. */
  static async start(redisUrl: string, dist?: string, nodeFlags: string[] = []): Promise<Dashboard> {
    const port = await freePort();
    const cli = dist ? join(resolve(dist), "assembly/main.js") : CLI;
    const [cmd, ...args] = cliArgvOf(cli, ["web", "--redis", redisUrl, "--port", String(port)]);
    args.splice(args.indexOf(cli), 0, ...nodeFlags);
    const child = spawn(cmd!, args, { stdio: ["ignore", "pipe", "inherit"] });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${url}/stats.json`)).ok) break;
      } catch {
        if (i > 100) throw new Error("the dashboard did not start");
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    return new Dashboard(url, child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** One GET to the last byte; its size in bytes. */
  async get(path: string): Promise<number> {
    const res = await fetch(`${this.url}${path}`);
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}: ${body.slice(0, 300)}`);
    return Buffer.byteLength(body);
  }

  /** VmHWM of the dashboard process, KB. */
  peakRssKb(): number {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${this.child.pid}/status`, "utf8"))?.[1] ?? 0);
  }

  /** Median ms of `runs` GETs (after a warm-up), request to last byte; the Redis work of the warm-up. */
  async time(redis: Redis, path: string, runs: number): Promise<Timing> {
    const get = () => this.get(path);
    const { work, value: bytes } = await redisWork(redis, get);
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await get();
      times.push(performance.now() - t);
    }
    return { median_ms: median(times), runs, work, bytes };
  }

  async stop(): Promise<void> {
    const done = new Promise((r) => this.child.once("exit", r));
    this.child.kill("SIGTERM");
    await done;
  }
}

/** The CLI as a whole process: median wall ms and the largest max RSS over `runs` runs, and the Redis work of one. */
export async function timeCli(redis: Redis, redisUrl: string, args: string[], runs: number): Promise<Timing> {
  const once = () =>
    new Promise<{ ms: number; rssKb: number }>((res, rej) => {
      const t = performance.now();
      const child = spawn("/usr/bin/time", ["-f", "__RSS__ %M", ...cliArgv(...args, "--redis", redisUrl)], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      let err = "";
      child.stderr.on("data", (d) => (err += d));
      child.on("exit", (code) => {
        const ms = performance.now() - t;
        const rss = /__RSS__ (\d+)/.exec(err);
        if (code !== 0 || !rss)
          rej(new Error(`sidekiq-bridge ${args.join(" ")} failed (${code}): ${err.slice(0, 500)}`));
        else res({ ms, rssKb: Number(rss[1]) });
      });
    });
  const { work } = await redisWork(redis, once);
  const times: number[] = [];
  let rss = 0;
  for (let i = 0; i < runs; i++) {
    const r = await once();
    times.push(r.ms);
    rss = Math.max(rss, r.rssKb);
  }
  return { median_ms: median(times), runs, work, rss_kb: rss };
}

export interface RubyOut {
  sidekiq: string;
  ruby: string;
  peak_rss_kb: number;
  pages?: Record<string, Timing>;
  api?: Record<string, Timing>;
  retry_all?: { entries: number; ms: number; left: number };
}

/** Sidekiq 8.1.7 in its root filesystem, running ruby-ops.rb against `redisUrl`. */
export class RubySide {
  private constructor(
    private readonly root: string,
    private readonly dir: string,
  ) {}

  static async prepare(): Promise<RubySide> {
    const target = MATRIX.find((t) => t.version === "8.1.7")!;
    const root = (await prepareRootfs([target]))[target.suite]!;
    const dir = `/opt/sidekiq-bridge/ops-${process.pid}`;
    mkdirSync(join(root, dir), { recursive: true });
    copyFileSync(join(HERE, "ruby-ops.rb"), join(root, dir, "ruby-ops.rb"));
    return new RubySide(root, dir);
  }

  async run(redisUrl: string, env: Record<string, string>, timeoutMs = 3_600_000): Promise<RubyOut> {
    const argv = chrootArgv(this.root, ["ruby", `${this.dir}/ruby-ops.rb`], { REDIS_URL: redisUrl, ...env });
    const r = await runCaptured(argv, "ruby-ops.rb", { timeoutMs });
    const line = r.stdout.split("\n").find((l) => l.startsWith("__OPS_RESULT__ "));
    if (r.code !== 0 || !line)
      throw new Error(`ruby-ops.rb failed (${r.code}):\n${r.stderr}${r.stdout}`.slice(0, 4000));
    return JSON.parse(line.slice("__OPS_RESULT__ ".length)) as RubyOut;
  }

  cleanup(): void {
    rmSync(join(this.root, this.dir), { recursive: true, force: true });
  }
}
