// Gets this machine ready for the interop tests: Debian packages, the root
// filesystems of the matrix, and clear words when that is not possible.
import { spawnSync, spawn } from "node:child_process";
import { buildRootfs, installedSidekiqVersion, FIXTURES_SRC } from "./local-backend.js";
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
