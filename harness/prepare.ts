// Gets this machine ready for the interop tests: Debian packages, the root
// filesystems of the matrix, and clear words when that is not possible.
import { spawnSync, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { buildRootfs, installedSidekiqVersion, FIXTURES_SRC, REPO_ROOT } from "./local-backend.js";
import type { SidekiqTarget, Suite } from "./versions.js";
import { join } from "node:path";

function have(cmd: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
}

/** Installs Debian packages whose command is missing (root and apt needed). */
export function ensureDebianPackages(wanted: Record<string, string>): void {
  const missing = Object.entries(wanted)
    .filter(([cmd]) => !have(cmd))
    .map(([, pkg]) => pkg);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`missing ${missing.join(", ")}; install them as root: apt-get install ${missing.join(" ")}`);
  }
  if (!have("apt-get"))
    throw new Error(`missing ${missing.join(", ")} and this machine has no apt-get: install them by hand`);
  console.error(`[sidekiq-bridge] installing ${missing.join(", ")} with apt-get`);
  const upd = spawnSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  const inst = spawnSync("apt-get", ["install", "-y", "-qq", ...missing], {
    stdio: "inherit",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (upd.status !== 0 || inst.status !== 0) throw new Error(`apt-get install ${missing.join(" ")} failed`);
}

/** Debian's Chromium for the dashboard's browser tests (installed when missing); its path. */
export function ensureChromium(): string {
  ensureDebianPackages({ chromium: "chromium" });
  return "/usr/bin/chromium";
}

function buildRootfsAsync(suite: Suite): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(FIXTURES_SRC, "bin/build-rootfs"), [suite], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(out.trim().split("\n").pop()!)
        : reject(new Error(`build-rootfs ${suite} failed (exit ${code})`)),
    );
  });
}

/**
 * Builds (or reuses) the root filesystem of every target and checks that each
 * holds exactly the Sidekiq release the matrix promises.
 */
export async function prepareRootfs(targets: readonly SidekiqTarget[]): Promise<Record<string, string>> {
  if (process.getuid?.() !== 0) {
    throw new Error(
      "the local backend needs root (debootstrap, chroot, mount). Run the tests as root, or set SIDEKIQ_BRIDGE_BACKEND=docker on a machine with a Docker engine.",
    );
  }
  ensureDebianPackages({ debootstrap: "debootstrap", unshare: "util-linux" });
  const suites = new Set(targets.map((t) => t.suite));
  const roots: Record<string, string> = {};
  // forky is verified with the trixie tree's newer keyring, so trixie goes first.
  const first = [...suites].filter((s) => s !== "forky");
  const built = await Promise.all(first.map((s) => buildRootfsAsync(s)));
  first.forEach((s, i) => (roots[s] = built[i]!));
  if (suites.has("forky")) roots.forky = await buildRootfsAsync("forky");
  for (const t of targets) {
    // An upstream release runs from its own sources; LocalBackend checks its version in Ruby.
    if (t.release) continue;
    const found = installedSidekiqVersion(roots[t.suite]!);
    if (found !== t.version) {
      throw new Error(
        `the ${t.suite} root filesystem holds Sidekiq ${found ?? "nothing"}, not ${t.version}: Debian moved on; update harness/versions.ts`,
      );
    }
  }
  return roots;
}

export { buildRootfs };

/** The variable docker-compose.yml hands every image build as its APT_OPTIONS build arg. */
export const APT_OPTIONS_VARIABLE = "SIDEKIQ_BRIDGE_APT_OPTIONS";

/** The comment above the line `updateComposeEnv` writes; the line after it is ours to change. */
const ENV_MARK =
  "# Written by npm run prepare:env: the Debian mirror serves expired Release files (an archive snapshot).";

/**
 * Keeps `.env` (which `docker compose` reads from the repository root; git
 * ignores it) in step with the Debian mirror: `SIDEKIQ_BRIDGE_APT_OPTIONS`
 * set to `aptOptions` under a comment saying why when they are not empty, and
 * that line gone when they are. Every other line is the user's and is kept;
 * no mirror host is written. Returns what it did, in a sentence.
 */
export function updateComposeEnv(aptOptions: string, file = join(REPO_ROOT, ".env")): string {
  const before = existsSync(file) ? readFileSync(file, "utf8") : undefined;
  const lines = (before ?? "").split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] === ENV_MARK) {
      if (lines[i + 1]?.startsWith(`${APT_OPTIONS_VARIABLE}=`)) i++;
      continue;
    }
    kept.push(lines[i]!);
  }
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  const own = kept.find((l) => l.startsWith(`${APT_OPTIONS_VARIABLE}=`));
  if (aptOptions !== "" && !own) kept.push(ENV_MARK, `${APT_OPTIONS_VARIABLE}=${JSON.stringify(aptOptions)}`);
  const after = kept.length > 0 ? `${kept.join("\n")}\n` : "";
  if (after === (before ?? "")) {
    if (own) return `.env: ${own} (set by hand) kept`;
    return aptOptions === ""
      ? ".env: the Debian mirror needs no apt options"
      : `.env: ${APT_OPTIONS_VARIABLE} already set`;
  }
  if (after === "") rmSync(file);
  else writeFileSync(file, after);
  return aptOptions === ""
    ? `.env: ${APT_OPTIONS_VARIABLE} removed, the Debian mirror needs no apt options`
    : `.env: ${APT_OPTIONS_VARIABLE}=${JSON.stringify(aptOptions)} for docker compose's image builds`;
}
