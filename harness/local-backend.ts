// The default backend: Debian root filesystems built by debootstrap, entered
// with chroot. Each Ruby process gets a private mount namespace with its own
// /proc (Sidekiq's heartbeat reads /proc/self/status), so nothing stays
// mounted when it exits, whatever way it exits.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, openSync, closeSync, readFileSync, readdirSync, rmSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { RubyResult, RunRubyOptions, SidekiqBackend, SidekiqProcess, StartSidekiqOptions } from "./backend.js";
import { requirementAllows, type Suite, type SidekiqTarget } from "./versions.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const FIXTURES_SRC = join(REPO_ROOT, "ruby-fixtures");
/**
 * Real Ruby add-on gems (sidekiq-unique-jobs, sidekiq-cron, OpenTelemetry),
 * unmodified, kept beside the repository in shared/: tests load them with
 * RUBYLIB and nothing of them is copied into the repository. A git worktree
 * one level deeper (wt/<name>) finds them too; SIDEKIQ_BRIDGE_PEERS overrides.
 */
export const PEERS_SRC =
  process.env.SIDEKIQ_BRIDGE_PEERS ??
  [resolve(REPO_ROOT, "../shared/peers/ruby"), resolve(REPO_ROOT, "../../shared/peers/ruby")].find((p) =>
    existsSync(p),
  ) ??
  resolve(REPO_ROOT, "../shared/peers/ruby");

/**
 * Upstream Sidekiq releases beyond Debian's (shared/peers/sidekiq/sidekiq-<version>),
 * beside the add-on gems; SIDEKIQ_BRIDGE_RELEASES overrides.
 */
export const RELEASES_SRC = process.env.SIDEKIQ_BRIDGE_RELEASES ?? join(dirname(PEERS_SRC), "sidekiq");

/**
 * The RUBYLIB that loads the named peer gems (folder names under
 * shared/peers/ruby, e.g. "sidekiq-unique-jobs-8.1.0"), as seen by Ruby whose
 * fixtures live at `fixturesDir`. Throws when a folder is missing: a test that
 * needs a real add-on must never pass without it.
 */
export function peersRubyLib(fixturesDir: string, folders: readonly string[]): string {
  for (const f of folders) {
    if (!existsSync(join(PEERS_SRC, f, "lib"))) {
      throw new Error(
        `the Ruby add-on ${f} is not in ${PEERS_SRC}: it is needed to run this test against the real gem`,
      );
    }
  }
  return folders.map((f) => `${fixturesDir}/peers/${f}/lib`).join(":");
}

/**
 * Whether the add-on in `folder` (of shared/peers/ruby) allows Sidekiq
 * `version`, by its gemspec's `add_dependency "sidekiq", ...` (no such line:
 * any release). Throws on a requirement it cannot read.
 */
export function addonAllows(folder: string, version: string): boolean {
  const dir = join(PEERS_SRC, folder);
  const spec = existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith(".gemspec")) : undefined;
  if (!spec) return true;
  const m = /add_dependency\s*\(?\s*["']sidekiq["']\s*,([^)\n]*)/.exec(readFileSync(join(dir, spec), "utf8"));
  if (!m) return true;
  const requirements = [...m[1]!.matchAll(/["']([^"']+)["']/g)].map((r) => r[1]!);
  try {
    return requirementAllows(requirements, version);
  } catch (e) {
    throw new Error(`${spec}: ${(e as Error).message} on sidekiq`, { cause: e });
  }
}

/** Builds (or finds in the cache) the root filesystem for a suite; returns its path. */
export function buildRootfs(suite: Suite | "valkey" | "valkey9" | "redis8" | "node24"): string {
  const r = spawnSync(join(FIXTURES_SRC, "bin/build-rootfs"), [suite], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (r.status !== 0)
    throw new Error(`could not prepare the ${suite} root filesystem (build-rootfs exited ${r.status})`);
  return r.stdout.trim().split("\n").pop()!;
}

/** Installed Sidekiq version inside a root filesystem, from the gem directory name. */
export function installedSidekiqVersion(root: string): string | undefined {
  const r = spawnSync(
    "sh",
    ["-c", `ls "${root}/usr/share/rubygems-integration/all/gems/" | sed -n 's/^sidekiq-\\([0-9.]*\\)$/\\1/p'`],
    {
      encoding: "utf8",
    },
  );
  return r.stdout.trim() || undefined;
}

/** Copies ruby-fixtures/ into the root filesystem under a per-run folder. */
export function installFixtures(root: string, runId: string): string {
  const inside = `/opt/sidekiq-bridge/${runId}`;
  const dest = join(root, inside);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  cpSync(FIXTURES_SRC, dest, { recursive: true, filter: (src) => !src.includes("/captures") });
  // The add-on gems ride along under peers/ (a few MB), so RUBYLIB can name them.
  if (existsSync(PEERS_SRC)) cpSync(PEERS_SRC, join(dest, "peers"), { recursive: true });
  return inside;
}

/**
 * Copies the upstream releases `targets` run from (their folders of
 * RELEASES_SRC, about 1.3 MB each) into this run's fixtures of `root`. A
 * missing folder is left missing: the backend refuses to run that release.
 */
export function installReleases(root: string, inside: string, targets: readonly SidekiqTarget[]): void {
  for (const t of targets) {
    const src = t.release && join(RELEASES_SRC, t.release);
    if (src && existsSync(src)) cpSync(src, join(root, inside, "releases", t.release!), { recursive: true });
  }
}

/**
 * `cmd` (["ruby", ...] or ["sidekiq", ...]) as it runs `target`. Debian's
 * release: unchanged. An upstream release: its lib/ first on RUBYLIB (after
 * its preloads), its own bin/sidekiq, and lib/release_check.rb loaded first,
 * which aborts unless Sidekiq::VERSION is the release's (a RUBYLIB naming a
 * missing folder would silently load Debian's). Throws when the folder is not
 * in the root filesystem.
 */
export function releaseCommand(
  root: string,
  fixturesDir: string,
  target: SidekiqTarget,
  cmd: string[],
  env: Record<string, string>,
): { cmd: string[]; env: Record<string, string> } {
  if (!target.release) return { cmd, env };
  const dir = `${fixturesDir}/releases/${target.release}`;
  if (!existsSync(join(root, dir, "lib/sidekiq/version.rb"))) {
    throw new Error(
      `Sidekiq ${target.version} is not in ${join(RELEASES_SRC, target.release)} (or was not installed in the ${target.suite} root filesystem): it is needed to run this release, and Debian's must not stand in for it`,
    );
  }
  const rubylib = [peersRubyLib(fixturesDir, target.preload ?? []), `${dir}/lib`, env.RUBYLIB ?? ""];
  const check = `-r${fixturesDir}/lib/release_check.rb`;
  const [head, ...rest] = cmd;
  if (head !== "ruby" && head !== "sidekiq") throw new Error(`cannot run ${head} on an upstream Sidekiq release`);
  return {
    cmd: head === "sidekiq" ? ["ruby", check, `${dir}/bin/sidekiq`, ...rest] : ["ruby", check, ...rest],
    env: { ...env, RUBYLIB: rubylib.filter(Boolean).join(":"), BRIDGE_SIDEKIQ_RELEASE: target.version },
  };
}

export function removeFixtures(root: string, inside: string): void {
  rmSync(join(root, inside), { recursive: true, force: true });
}

/**
 * Runs argv with `opts.input` on stdin and collects its output; kills it and
 * rejects after `opts.timeoutMs` (120 s by default). `spawnEnv` is the
 * process's environment (this process's by default).
 */
export function runCaptured(
  argv: string[],
  what: string,
  opts: Pick<RunRubyOptions, "input" | "timeoutMs"> = {},
  spawnEnv?: NodeJS.ProcessEnv,
): Promise<RubyResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: spawnEnv });
    let stdout = "";
    let stderr = "";
    // Decoded across chunks: a UTF-8 character split between two chunks must not become U+FFFD.
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (stdout += d));
    child.stderr.on("data", (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${what} timed out after ${opts.timeoutMs ?? 120_000} ms\n${stderr}`));
    }, opts.timeoutMs ?? 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}

const ENTER = 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"';

/**
 * argv that runs `cmd` inside a root filesystem, in a private mount namespace
 * with its own /proc (gone when the process exits), with a clean environment.
 * The `exec`s keep the pid, so the process is stopped by the pid we started.
 */
export function chrootArgv(root: string, cmd: string[], env: Record<string, string>): string[] {
  const envArgs = Object.entries({ PATH: "/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/root", LANG: "C.UTF-8", ...env }).map(
    ([k, v]) => `${k}=${v}`,
  );
  return [...chrootPrefix(root), "/usr/bin/env", "-i", ...envArgs, ...cmd];
}

/** argv that enters `root` (private mount namespace, its own /proc); the command follows, with this environment. */
export function chrootPrefix(root: string): string[] {
  return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", ENTER, root];
}

export class LocalBackend implements SidekiqBackend {
  readonly name = "local" as const;

  constructor(
    private readonly rootfs: Record<string, string>,
    private readonly fixturesDir: string,
    private readonly logDir: string,
    private readonly redisBase: string,
  ) {}

  rubyRedisUrl(db: number): string {
    return `${this.redisBase}/${db}`;
  }

  private root(target: SidekiqTarget): string {
    const root = this.rootfs[target.suite];
    if (!root || !existsSync(root))
      throw new Error(`no root filesystem prepared for ${target.suite} (Sidekiq ${target.version})`);
    return root;
  }

  /** argv that runs `cmd` inside the target's root filesystem with a private /proc (on its release's sources). */
  private command(target: SidekiqTarget, cmd: string[], env: Record<string, string>): string[] {
    const root = this.root(target);
    const r = releaseCommand(root, this.fixturesDir, target, cmd, env);
    return chrootArgv(root, r.cmd, r.env);
  }

  runRuby(target: SidekiqTarget, script: string, args: string[] = [], opts: RunRubyOptions = {}): Promise<RubyResult> {
    const argv = this.command(target, ["ruby", `${this.fixturesDir}/${script}`, ...args], opts.env ?? {});
    return runCaptured(argv, `ruby ${script} (Sidekiq ${target.version})`, opts);
  }

  async startSidekiq(target: SidekiqTarget, opts: StartSidekiqOptions): Promise<SidekiqProcess> {
    mkdirSync(this.logDir, { recursive: true });
    const logPath = join(
      this.logDir,
      `sidekiq-${target.version}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`,
    );
    const fd = openSync(logPath, "a");
    const args = [
      "sidekiq",
      "-r",
      `${this.fixturesDir}/${opts.require ?? "lib/jobs.rb"}`,
      "-c",
      String(opts.concurrency ?? 5),
      "-t",
      String(opts.timeout ?? 5),
    ];
    for (const q of opts.queues) args.push("-q", q);
    if (opts.tag) args.push("-g", opts.tag);
    const argv = this.command(target, args, opts.env ?? {});
    // unshare, sh and chroot all exec in place, so this pid is Ruby's own.
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    return {
      pid: child.pid!,
      logPath,
      log: () => readFileSync(logPath, "utf8"),
      async signal(signal: NodeJS.Signals) {
        child.kill(signal);
      },
      async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 30_000) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill(signal);
        const t = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
        await exited;
        clearTimeout(t);
      },
    };
  }
}
