// The Docker backend: docker-compose.yml's services, driven through the
// docker-compose npm package. Ruby reaches Redis as `redis:6379`; Node through
// the port compose publishes on 127.0.0.1. Not exercised by CI (no engine there).
import * as compose from "docker-compose";
import { randomBytes } from "node:crypto";
import type { RubyResult, RunRubyOptions, SidekiqBackend, SidekiqProcess, StartSidekiqOptions } from "./backend.js";
import type { SidekiqTarget } from "./versions.js";
import { REPO_ROOT } from "./local-backend.js";

const FIXTURES = "/opt/sidekiq-bridge/fixtures";
const opts = (extra: compose.IDockerComposeOptions = {}): compose.IDockerComposeOptions => ({
  cwd: REPO_ROOT,
  config: "docker-compose.yml",
  ...extra,
});

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
}

async function execIn(service: string, cmd: string[], env: Record<string, string> = {}): Promise<RubyResult> {
  try {
    const r = await compose.exec(service, cmd, opts({ commandOptions: envArgs(env) }));
    return { code: r.exitCode ?? 0, stdout: r.out, stderr: r.err };
  } catch (e) {
    // docker-compose rejects with the result object when the command fails.
    const r = e as compose.IDockerComposeResult;
    if (r && typeof r === "object" && "exitCode" in r) return { code: r.exitCode, stdout: r.out, stderr: r.err };
    throw e;
  }
}

/** Starts the matrix; returns the Redis URL for Node. */
export async function composeUp(services: string[]): Promise<string> {
  await compose.upMany(["redis", ...services], opts({ commandOptions: ["--build", "--wait"] }));
  const p = await compose.port("redis", 6379, opts());
  return `redis://127.0.0.1:${p.data.port}`;
}

export async function composeDown(): Promise<void> {
  await compose.downAll(opts({ commandOptions: ["--volumes"] }));
}

export class DockerBackend implements SidekiqBackend {
  readonly name = "docker" as const;

  rubyRedisUrl(db: number): string {
    return `redis://redis:6379/${db}`;
  }

  runRuby(target: SidekiqTarget, script: string, args: string[] = [], o: RunRubyOptions = {}): Promise<RubyResult> {
    if (o.input) throw new Error("the docker backend does not pass standard input; pass the code as an argument");
    return execIn(target.service, ["ruby", `${FIXTURES}/${script}`, ...args], o.env ?? {});
  }

  async startSidekiq(target: SidekiqTarget, o: StartSidekiqOptions): Promise<SidekiqProcess> {
    const name = `bridge-${randomBytes(4).toString("hex")}`;
    const logPath = `/tmp/${name}.log`;
    const args = [
      "sidekiq",
      "-r",
      `${FIXTURES}/${o.require ?? "lib/jobs.rb"}`,
      "-c",
      String(o.concurrency ?? 5),
      "-t",
      String(o.timeout ?? 5),
    ];
    for (const q of o.queues) args.push("-q", q);
    if (o.tag) args.push("-g", o.tag);
    const script = `echo $$ > /tmp/${name}.pid; exec ${args.map((a) => `'${a}'`).join(" ")} > ${logPath} 2>&1`;
    void execIn(target.service, ["sh", "-c", script], o.env ?? {});
    let pid = 0;
    for (let i = 0; i < 100 && !pid; i++) {
      const r = await execIn(target.service, ["cat", `/tmp/${name}.pid`]);
      pid = Number(r.stdout.trim()) || 0;
      if (!pid) await new Promise((r2) => setTimeout(r2, 100));
    }
    let log = "";
    return {
      pid,
      logPath,
      log: () => log,
      async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 30_000) {
        const sig = signal.replace(/^SIG/, "");
        await execIn(target.service, [
          "sh",
          "-c",
          `kill -${sig} ${pid}; for i in $(seq ${Math.ceil(timeoutMs / 100)}); do kill -0 ${pid} 2>/dev/null || exit 0; sleep 0.1; done; kill -KILL ${pid}`,
        ]);
        log = (await execIn(target.service, ["cat", logPath])).stdout;
      },
    };
  }
}
