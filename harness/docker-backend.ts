// The Docker backend: docker-compose.yml's Redis and Ruby services, with
// harness/docker-compose.test.yml on top, started through the docker-compose
// npm package under a project name of their own (a user's `docker compose up`
// fleet is left alone). Ruby runs in the containers with `docker exec`; all
// services share this machine's network, so Ruby and Node use the same URLs.
import * as compose from "docker-compose";
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RubyResult, RunRubyOptions, SidekiqBackend, SidekiqProcess, StartSidekiqOptions } from "./backend.js";
import { FIXTURES_SRC, PEERS_SRC, REPO_ROOT, runCaptured } from "./local-backend.js";
import { freePort } from "./redis-server.js";
import type { SidekiqTarget } from "./versions.js";

/** Where docker-compose.yml mounts ruby-fixtures/ in the Ruby images. */
export const DOCKER_FIXTURES = "/opt/sidekiq-bridge/fixtures";
const CONFIG = ["docker-compose.yml", "harness/docker-compose.test.yml"];

export interface ComposeRun {
  project: string;
  redisUrl: string;
  /** service name -> container id */
  containers: Record<string, string>;
}

function options(project: string, env: Record<string, string>): compose.IDockerComposeOptions {
  return {
    cwd: REPO_ROOT,
    config: CONFIG,
    composeOptions: [["--project-name", project]],
    env: { ...process.env, ...env },
  };
}

/** The line of compose's output that says what went wrong, else its last line. */
function reason(e: unknown): string {
  const r = e as Partial<compose.IDockerComposeResult>;
  const text = `${r?.err ?? ""}\n${r?.out ?? ""}`.trim() || String((e as Error)?.message ?? e);
  const lines = text
    .split("\n")
    // BuildKit echoes each RUN command (with the messages it may print) and prefixes output with "#12 0.53".
    .filter((l) => !/\bRUN\b/.test(l))
    .map((l) => l.replace(/^#\d+ [\d.]+ /, "").trim())
    .filter(Boolean);
  const patterns = [
    /installed (Sidekiq|Node\.js) .*, not /,
    /address already in use/i,
    /\b(error|failed|unhealthy|exited)\b/i,
  ];
  for (const p of patterns) {
    const hit = lines.find((l) => p.test(l));
    if (hit) return hit.slice(0, 400);
  }
  return (lines.at(-1) ?? "unknown error").slice(0, 400);
}

/**
 * Builds (when needed) and starts Redis and the Ruby services of `services`,
 * waiting until they are up. On any failure everything of the project is
 * removed and one line says why.
 */
export async function composeUp(services: string[], aptOptions: string): Promise<ComposeRun> {
  const project = `sidekiq-bridge-test-${process.pid}`;
  await removeAbandonedProjects();
  const port = await freePort();
  const peers = existsSync(PEERS_SRC) ? PEERS_SRC : mkdtempSync(join(tmpdir(), "sidekiq-bridge-no-peers-"));
  // The read-only fixtures mount cannot grow a mount point: it must exist (git-ignored).
  mkdirSync(join(FIXTURES_SRC, "peers"), { recursive: true });
  const env = {
    SIDEKIQ_BRIDGE_REDIS_PORT: String(port),
    SIDEKIQ_BRIDGE_PEERS: peers,
    SIDEKIQ_BRIDGE_APT_OPTIONS: aptOptions,
  };
  const o = options(project, env);
  try {
    await compose.buildMany(["redis", ...services], o);
  } catch (e) {
    await composeDown(project, env);
    throw new Error(`docker compose build failed: ${reason(e)}`, { cause: e });
  }
  try {
    await compose.upMany(["redis", ...services], { ...o, commandOptions: ["--wait", "--wait-timeout", "120"] });
    const containers: Record<string, string> = {};
    const ps = await compose.execCompose("ps", ["--all", "--format", "{{.ID}} {{.Service}}"], o);
    for (const line of ps.out.split("\n")) {
      const [id, svc] = line.trim().split(" ");
      if (id && svc) containers[svc] = id;
    }
    for (const s of ["redis", ...services]) if (!containers[s]) throw new Error(`service ${s} has no container`);
    return { project, redisUrl: `redis://127.0.0.1:${port}`, containers };
  } catch (e) {
    const why = reason(e);
    const logs = await compose
      .logs(["redis", ...services], { ...o, commandOptions: ["--tail", "3"] })
      .catch(() => null);
    await composeDown(project, env);
    const last = logs?.out.trim().split("\n").at(-1)?.trim();
    throw new Error(`docker compose up failed: ${why}${last ? ` (last log line: ${last.slice(0, 300)})` : ""}`, {
      cause: e,
    });
  }
}

/** Projects of earlier test runs whose process is gone (killed before it could clean up). */
async function removeAbandonedProjects(): Promise<void> {
  const r = spawnSync("docker", ["ps", "-a", "--format", '{{.Label "com.docker.compose.project"}}'], {
    encoding: "utf8",
  });
  const names = new Set((r.stdout ?? "").split("\n").filter((n) => /^sidekiq-bridge-test-\d+$/.test(n)));
  for (const name of names) {
    const pid = Number(name.slice("sidekiq-bridge-test-".length));
    if (pid === process.pid || existsSync(`/proc/${pid}`)) continue;
    console.error(`[sidekiq-bridge] removing ${name}, left behind by a test run that is gone`);
    await composeDown(name);
  }
}

/** Removes the project's containers and network; never throws. */
export async function composeDown(project: string, env: Record<string, string> = {}): Promise<void> {
  await compose
    .downAll({
      ...options(project, {
        SIDEKIQ_BRIDGE_REDIS_PORT: "0",
        SIDEKIQ_BRIDGE_PEERS: tmpdir(),
        ...env,
      }),
      commandOptions: ["--volumes", "--remove-orphans", ["--timeout", "5"]],
    })
    .catch((e) => console.error(`[sidekiq-bridge] docker compose down -p ${project}: ${reason(e)}`));
}

function envArgs(env: Record<string, string>): string[] {
  return Object.entries({ LANG: "C.UTF-8", ...env }).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
}

export class DockerBackend implements SidekiqBackend {
  readonly name = "docker" as const;

  constructor(
    private readonly containers: Record<string, string>,
    private readonly logDir: string,
    private readonly redisBase: string,
  ) {}

  rubyRedisUrl(db: number): string {
    return `${this.redisBase}/${db}`;
  }

  private container(target: SidekiqTarget): string {
    // Its images carry Debian's releases only; the sweep runs on the local backend (harness/README.md).
    if (target.release) throw new Error(`Sidekiq ${target.version} runs on the local backend only`);
    const id = this.containers[target.service];
    if (!id) throw new Error(`no container started for ${target.service} (Sidekiq ${target.version})`);
    return id;
  }

  private exec(target: SidekiqTarget, cmd: string[], o: RunRubyOptions = {}): Promise<RubyResult> {
    const argv = ["docker", "exec", "-i", ...envArgs(o.env ?? {}), this.container(target), ...cmd];
    return runCaptured(argv, `${cmd.join(" ")} (Sidekiq ${target.version})`, o);
  }

  runRuby(target: SidekiqTarget, script: string, args: string[] = [], o: RunRubyOptions = {}): Promise<RubyResult> {
    return this.exec(target, ["ruby", `${DOCKER_FIXTURES}/${script}`, ...args], o);
  }

  async startSidekiq(target: SidekiqTarget, o: StartSidekiqOptions): Promise<SidekiqProcess> {
    mkdirSync(this.logDir, { recursive: true });
    const name = `sidekiq-${target.version}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const logPath = join(this.logDir, `${name}.log`);
    const pidFile = `/tmp/${name}.pid`;
    const args = [
      "sidekiq",
      "-r",
      `${DOCKER_FIXTURES}/${o.require ?? "lib/jobs.rb"}`,
      "-c",
      String(o.concurrency ?? 5),
      "-t",
      String(o.timeout ?? 5),
    ];
    for (const q of o.queues) args.push("-q", q);
    if (o.tag) args.push("-g", o.tag);
    // sh writes its pid and execs Ruby in place: the pid is Sidekiq's, inside the container.
    const fd = openSync(logPath, "a");
    const child = spawn(
      "docker",
      [
        "exec",
        ...envArgs(o.env ?? {}),
        this.container(target),
        "sh",
        "-c",
        'echo $$ > "$0" && exec "$@"',
        pidFile,
        ...args,
      ],
      { stdio: ["ignore", fd, fd] },
    );
    closeSync(fd);
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    let pid = 0;
    for (let i = 0; i < 100 && !pid && child.exitCode === null; i++) {
      pid = Number((await this.exec(target, ["cat", pidFile])).stdout.trim()) || 0;
      if (!pid) await new Promise((r) => setTimeout(r, 100));
    }
    if (!pid)
      throw new Error(`sidekiq did not start in ${target.service}: ${readFileSync(logPath, "utf8").slice(-500)}`);
    // The images have no procps: the shell's own kill.
    const kill = (sig: string) => this.exec(target, ["sh", "-c", `kill -s ${sig} ${pid}`]);
    return {
      pid,
      logPath,
      log: () => readFileSync(logPath, "utf8"),
      async signal(signal: NodeJS.Signals) {
        await kill(signal.replace(/^SIG/, ""));
      },
      async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 30_000) {
        if (child.exitCode !== null || child.signalCode !== null) return;
        await kill(signal.replace(/^SIG/, ""));
        const t = setTimeout(() => void kill("KILL"), timeoutMs);
        await exited;
        clearTimeout(t);
      },
    };
  }
}
