// A throwaway redis-server on a free loopback port, stopped by the pid we started.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chrootPrefix } from "./local-backend.js";

export interface RedisServer {
  url: string;
  port: number;
  pid: number;
  dir: string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === "object" && addr ? resolve(addr.port) : reject(new Error("no port"))));
    });
  });
}

/** Finds redis-server, or explains how to get it. */
export function redisServerBinary(): string {
  const which = spawnSync("sh", ["-c", "command -v redis-server"], { encoding: "utf8" });
  const path = which.stdout.trim();
  if (which.status === 0 && path) return path;
  throw new Error(
    "redis-server is not installed. Run `npm run prepare:env` as root (it installs Debian's redis-server), or `apt-get install redis-server`.",
  );
}

async function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, "127.0.0.1");
    s.setTimeout(500);
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      s.destroy();
      // A server whose default user is off answers NOAUTH: it is up all the same.
      resolve(/^(\+PONG|-NOAUTH|-NOPERM)/.test(d.toString()));
    });
    s.on("error", () => resolve(false));
    s.on("timeout", () => {
      s.destroy();
      resolve(false);
    });
  });
}

export interface StartRedisOptions {
  /** Extra redis.conf directives, e.g. ["appendonly yes"]. */
  config?: string[];
  databases?: number;
  /** A fixed port and data folder, to restart a server on the same data (the folder is kept). */
  port?: number;
  dir?: string;
  /** Another server binary with redis-server's flags (e.g. valkey-server). */
  binary?: string;
  /** Run the binary inside this root filesystem (chroot with a private /proc), e.g. Debian trixie's Valkey. */
  root?: string;
}

export async function startRedis(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const bin = opts.binary ?? (opts.root ? "redis-server" : redisServerBinary());
  const ownDir = opts.dir === undefined;
  const dir =
    opts.dir ??
    mkdtempSync(opts.root ? join(opts.root, "tmp", "sidekiq-bridge-redis-") : join(tmpdir(), "sidekiq-bridge-redis-"));
  // Paths as the server sees them (inside the root filesystem when chrooted).
  const inside = opts.root ? dir.slice(opts.root.replace(/\/$/, "").length) : dir;
  for (let attempt = 0; ; attempt++) {
    const port = opts.port ?? (await freePort());
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      inside,
      "--save",
      "",
      "--appendonly",
      "no",
      "--databases",
      String(opts.databases ?? 256),
      "--logfile",
      join(inside, "redis.log"),
    ];
    for (const line of opts.config ?? []) {
      const [k, ...v] = line.split(/\s+/);
      args.push(`--${k}`, ...v);
    }
    // In a root filesystem, sh and chroot exec in place, so the pid is the server's own.
    const [cmd, ...argv] = [...(opts.root ? chrootPrefix(opts.root) : []), bin, ...args];
    const child: ChildProcess = spawn(cmd!, argv, { stdio: "ignore" });
    const pid = child.pid!;
    let exited = false;
    child.once("exit", () => (exited = true));
    const deadline = Date.now() + 10_000;
    while (!exited && Date.now() < deadline && !(await ping(port))) await new Promise((r) => setTimeout(r, 50));
    if (!exited && (await ping(port))) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        pid,
        dir,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) {
            const done = new Promise((r) => child.once("exit", r));
            process.kill(pid, "SIGTERM");
            const t = setTimeout(() => process.kill(pid, "SIGKILL"), 5000);
            await done;
            clearTimeout(t);
          }
          if (ownDir) rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (!exited) process.kill(pid, "SIGKILL");
    // Another process may have taken the port between our probe and redis' bind.
    if (attempt >= 3 || opts.port !== undefined) {
      throw new Error(`redis-server did not start (see ${join(dir, "redis.log")})`);
    }
  }
}
