// A Docker engine for the docker backend and `docker compose up`: Debian's
// docker.io, Debian's Compose v2 plugin, and dockerd started when it is not
// running (and stopped again only if this process started it).
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildRootfs } from "./local-backend.js";
import { ensureDebianPackages } from "./prepare.js";
import type { Suite } from "./versions.js";

/** Where the docker CLI (20.10 and later) looks for plugins system-wide. */
const PLUGIN_DIR = "/usr/local/lib/docker/cli-plugins";

function ok(cmd: string, args: string[]): boolean {
  return spawnSync(cmd, args, { stdio: "ignore" }).status === 0;
}

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find(Boolean) ?? ""
  );
}

/**
 * `docker compose` (v2). bookworm's own docker-compose is the old v1 Python
 * tool, so the plugin comes from Debian forky's docker-compose package, read
 * through the apt lists of the cached forky tree (the node24 root
 * filesystem): no apt source of this machine is changed.
 */
export function ensureComposePlugin(): void {
  if (ok("docker", ["compose", "version"])) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `the Docker Compose v2 plugin is missing: install Debian's docker-compose (trixie or later) as root`,
    );
  const tree = buildRootfs("node24");
  const work = mkdtempSync(join(tmpdir(), "sidekiq-bridge-compose-"));
  try {
    mkdirSync(join(work, "cache"));
    mkdirSync(join(work, "parts"));
    const apt = spawnSync(
      "apt-get",
      [
        "-q",
        "-o",
        `Dir::Etc::SourceList=${tree}/etc/apt/sources.list`,
        "-o",
        `Dir::Etc::SourceParts=${work}/parts`,
        "-o",
        `Dir::State::Lists=${tree}/var/lib/apt/lists`,
        "-o",
        `Dir::State::Status=${tree}/var/lib/dpkg/status`,
        "-o",
        `Dir::Cache=${work}/cache`,
        "-o",
        "Debug::NoLocking=1",
        "-o",
        "APT::Sandbox::User=root",
        "download",
        "docker-compose",
      ],
      { cwd: work, encoding: "utf8" },
    );
    const deb = readdirSync(work).find((f) => f.startsWith("docker-compose_") && f.endsWith(".deb"));
    if (apt.status !== 0 || !deb)
      throw new Error(`could not download Debian forky's docker-compose: ${firstLine(apt.stderr) || "no .deb"}`);
    const x = spawnSync(
      "sh",
      [
        "-c",
        'dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/libexec/docker/cli-plugins/docker-compose',
        "sh",
        deb,
        work,
      ],
      { cwd: work, encoding: "utf8" },
    );
    if (x.status !== 0) throw new Error(`could not unpack ${deb}: ${firstLine(x.stderr)}`);
    mkdirSync(PLUGIN_DIR, { recursive: true });
    const dest = join(PLUGIN_DIR, "docker-compose");
    copyFileSync(join(work, "usr/libexec/docker/cli-plugins/docker-compose"), `${dest}.tmp`);
    chmodSync(`${dest}.tmp`, 0o755);
    spawnSync("mv", ["-f", `${dest}.tmp`, dest]);
    console.error(`[sidekiq-bridge] installed the Docker Compose plugin from ${deb} into ${PLUGIN_DIR}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!ok("docker", ["compose", "version"]))
    throw new Error("`docker compose version` still fails after installing the plugin");
}

export interface DockerEngine {
  /** The daemon's version, e.g. "20.10.24+dfsg1". */
  version: string;
  /** Stops dockerd if this process started it; otherwise does nothing. */
  release(): Promise<void>;
}

function serverVersion(): string | undefined {
  const r = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8", timeout: 20_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * Makes a Docker engine answer: installs docker.io and the Compose plugin when
 * missing (root and apt), starts dockerd when nothing answers on the socket.
 * Throws one line saying why when that cannot be done.
 */
export async function ensureDockerEngine(logDir: string = tmpdir()): Promise<DockerEngine> {
  ensureDebianPackages({ dockerd: "docker.io" });
  ensureComposePlugin();
  const running = serverVersion();
  if (running) return { version: running, release: async () => {} };
  if (process.getuid?.() !== 0)
    throw new Error("no Docker engine answers and starting dockerd needs root (or start it yourself)");
  const logPath = join(logDir, "dockerd.log");
  const fd = openSync(logPath, "a");
  const child = spawn("dockerd", [], { stdio: ["ignore", fd, fd], detached: true });
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const v = serverVersion();
    if (v) {
      console.error(`[sidekiq-bridge] started dockerd ${v} (pid ${child.pid}, log ${logPath})`);
      return {
        version: v,
        async release() {
          if (gone) return;
          child.kill("SIGTERM");
          const t = setTimeout(() => child.kill("SIGKILL"), 30_000);
          await exited;
          clearTimeout(t);
        },
      };
    }
    if (gone || Date.now() > deadline) {
      child.kill("SIGKILL");
      const tail = spawnSync("tail", ["-n", "1", logPath], { encoding: "utf8" }).stdout.trim();
      throw new Error(
        `dockerd did not start${gone ? ` (exit ${child.exitCode})` : " within 60 s"}: ${tail} (log ${logPath})`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

function imageExists(ref: string): boolean {
  return ok("docker", ["image", "inspect", ref]);
}

/**
 * `debian:<suite>` for each suite, so `FROM debian:${SUITE}` builds without an
 * image registry: an image already present (pulled by the user) is used as it
 * is, else one is imported from the cached debootstrap tree of that suite.
 */
export function ensureDebianBaseImages(suites: readonly string[]): void {
  for (const suite of new Set(suites)) {
    const ref = `debian:${suite}`;
    if (imageExists(ref)) continue;
    const tree = buildRootfs(suite as Suite);
    console.error(`[sidekiq-bridge] importing ${tree} as ${ref} (no image registry needed)`);
    // Leave out what the local backend copies in per run, and kernel mounts.
    const r = spawnSync(
      "sh",
      [
        "-c",
        'tar -C "$1" --one-file-system --exclude=./opt/sidekiq-bridge --exclude="./proc/*" --exclude="./sys/*" -c . | docker import - "$2" >/dev/null',
        "sh",
        tree,
        ref,
      ],
      { encoding: "utf8" },
    );
    if (r.status !== 0 || !imageExists(ref))
      throw new Error(`could not import ${tree} as ${ref}: ${firstLine(r.stderr)}`);
  }
}

/**
 * Extra apt options for image builds, as a string for the APT_OPTIONS build
 * arg: "-o Acquire::Check-Valid-Until=false" only when the Debian mirror the
 * cached trees came from serves a Release file whose Valid-Until has passed
 * (an archive snapshot), else nothing.
 */
export async function aptOptionsForBuilds(suite = "forky"): Promise<string> {
  const tree = buildRootfs(suite as Suite);
  const list = spawnSync("sh", ["-c", `awk '$1=="deb" {print $2; exit}' "$1"/etc/apt/sources.list`, "sh", tree], {
    encoding: "utf8",
  }).stdout.trim();
  if (!list) return "";
  try {
    const res = await fetch(`${list.replace(/\/$/, "")}/dists/${suite}/InRelease`, {
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    const until = /^Valid-Until: (.+)$/m.exec(text)?.[1];
    if (until && Date.parse(until) < Date.now()) {
      console.error(
        `[sidekiq-bridge] the Debian mirror's ${suite} Release expired on ${until}: image builds use -o Acquire::Check-Valid-Until=false`,
      );
      return "-o Acquire::Check-Valid-Until=false";
    }
  } catch {
    // Unreachable mirror: the build says so itself.
  }
  return "";
}
