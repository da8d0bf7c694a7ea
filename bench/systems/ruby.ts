// Ruby Sidekiq 8.1.7 from the forky root filesystem the interop tests use
// (prepareRootfs, installFixtures). Client: Sidekiq::Client.push_bulk and
// perform_async in `ruby lib/bench_jobs.rb client`; worker: a real `sidekiq`
// process requiring lib/bench_jobs.rb. Processes are entered the way
// harness/local-backend.ts does it (private mount namespace with
// its own /proc, chroot, exec all the way so the pid is Ruby's), with
// `taskset` in front so Ruby starts on the CPU the harness chose.
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { chrootArgv, installFixtures, installedSidekiqVersion, removeFixtures } from "../../harness/local-backend.js";
import { prepareRootfs } from "../../harness/prepare.js";
import { MATRIX, type SidekiqTarget } from "../../harness/versions.js";
import { Child } from "../lib/child.js";
import { SidekiqFamily } from "./sidekiq-family.js";
import type { BenchRedis, SystemUnderTest, WorkerSpec } from "./types.js";

export class RubySystem implements SystemUnderTest {
  readonly id = "ruby";
  readonly group = "ruby";
  readonly ours = false;
  readonly target: SidekiqTarget;
  private root = "";
  private fixtures = "";
  private rubyDescription = "";

  constructor(version = "8.1.7") {
    const t = MATRIX.find((m) => m.version === version);
    if (!t) throw new Error(`Sidekiq ${version} is not in harness/versions.ts`);
    this.target = t;
  }

  get label(): string {
    return `Ruby Sidekiq ${this.target.version}`;
  }

  describe(): string {
    return `Sidekiq ${installedSidekiqVersion(this.root) ?? "?"} on ${this.rubyDescription} (Debian ${this.target.suite} root filesystem)`;
  }

  async setup(): Promise<void> {
    const roots = await prepareRootfs([this.target]);
    this.root = roots[this.target.suite]!;
    this.fixtures = installFixtures(this.root, `bench-${process.pid}-${randomBytes(3).toString("hex")}`);
    const [cmd, ...args] = this.argv(["ruby", "-e", "print RUBY_DESCRIPTION"], {});
    const v = spawnSync(cmd!, args, { encoding: "utf8" });
    this.rubyDescription = v.stdout.trim() || `Ruby ${this.target.ruby}`;
  }

  async teardown(): Promise<void> {
    if (this.fixtures) removeFixtures(this.root, this.fixtures);
  }

  /** argv that runs `cmd` inside the root filesystem with a private /proc. */
  private argv(cmd: string[], env: Record<string, string>): string[] {
    return chrootArgv(this.root, cmd, env);
  }

  family(r: BenchRedis): SidekiqFamily {
    return new SidekiqFamily(r);
  }

  spawnClient(r: BenchRedis, cpu: number): Child {
    return new Child(
      `ruby client`,
      this.argv(["ruby", `${this.fixtures}/lib/bench_jobs.rb`, "client"], { REDIS_URL: r.url, BENCH_POOL: "50" }),
      { cpu },
    );
  }

  spawnWorker(r: BenchRedis, spec: WorkerSpec, cpu: number): Child {
    const env: Record<string, string> = { REDIS_URL: r.url };
    if (spec.pollSeconds !== undefined) env.BENCH_POLL = String(spec.pollSeconds);
    const cmd = [
      "sidekiq",
      "-r",
      `${this.fixtures}/lib/bench_jobs.rb`,
      "-c",
      String(spec.concurrency),
      "-q",
      "bench",
      "-t",
      "5",
    ];
    return new Child(`ruby sidekiq -c ${spec.concurrency}`, this.argv(cmd, env), { cpu });
  }
}
