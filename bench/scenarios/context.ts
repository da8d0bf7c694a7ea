// What every scenario gets, and the steps they share.
import type { BenchConfig } from "../config.js";
import type { Child } from "../lib/child.js";
import { TEST_CPU } from "../lib/cpu.js";
import { countCommands, readCommandStats, resetCommandStats, type CommandCount } from "../measure/commandstats.js";
import { Interference } from "../measure/interference.js";
import { procCpuUs, procMemory } from "../measure/proc.js";
import type { Results } from "../report/model.js";
import type { BenchRedis, QueueFamily, SystemUnderTest, WorkerSpec } from "../systems/types.js";

export interface ScenarioContext {
  cfg: BenchConfig;
  system: SystemUnderTest;
  r: BenchRedis;
  family: QueueFamily;
  results: Results;
  log: (msg: string) => void;
}

export interface RunInfo {
  warmup: boolean;
  label: string;
}

/**
 * One figure (e.g. "drain at concurrency 10") for one system: open() starts
 * its processes, run() does one warm-up or measured run, close() records what
 * spans the runs (peak RSS) and stops the processes. The harness interleaves
 * the runs of every system (run 1 of each, then run 2 of each, ...), so a
 * slow spell on a shared machine hits all systems alike.
 */
export interface Session {
  run(p: RunInfo): Promise<void>;
  close(): Promise<void>;
}

export interface Figure {
  scenario: "enqueue" | "drain" | "latency" | "scheduled";
  name: string;
  open(ctx: ScenarioContext): Promise<Session>;
}

/** Each run of a figure: warm-ups first (flagged), then the measured runs. */
export function* runPlan(cfg: BenchConfig): Generator<RunInfo> {
  for (let i = 0; i < cfg.warmups; i++) yield { warmup: true, label: `warm-up ${i + 1}` };
  for (let i = 0; i < cfg.runs; i++) yield { warmup: false, label: `run ${i + 1}/${cfg.runs}` };
}

/** Starts a worker, waits until it says it is ready, then lets it settle into its idle fetch. */
export async function startWorker(ctx: ScenarioContext, spec: WorkerSpec): Promise<Child> {
  const child = ctx.system.spawnWorker(ctx.r, spec, TEST_CPU);
  try {
    await child.next("ready", 120_000);
    await waitForHeartbeat(ctx);
    await new Promise((r) => setTimeout(r, 1000));
    return child;
  } catch (e) {
    await child.stop(2000);
    throw e;
  }
}

/** Sidekiq-format workers register in `processes` on their first beat; BullMQ has no such set. */
async function waitForHeartbeat(ctx: ScenarioContext): Promise<void> {
  if (ctx.system.group === "bullmq") return;
  const deadline = Date.now() + 30_000;
  while ((await ctx.r.redis.scard("processes")) === 0) {
    if (Date.now() > deadline) throw new Error(`${ctx.system.id}: no heartbeat in \`processes\` after 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startClient(ctx: ScenarioContext, cpu: number): Promise<Child> {
  const child = ctx.system.spawnClient(ctx.r, cpu);
  try {
    await child.next("ready", 120_000);
    return child;
  } catch (e) {
    await child.stop(2000);
    throw e;
  }
}

/** A measured window: commandstats reset at the start, read at the end; /proc CPU of `pid` around it. */
export class Window {
  private procCpu0?: number;
  private interference?: Interference;
  private constructor(
    private readonly ctx: ScenarioContext,
    private readonly pid: number,
  ) {}

  /** `others`: more processes of ours running in the window (a load generator). */
  static async open(ctx: ScenarioContext, pid: number, others: number[] = []): Promise<Window> {
    const w = new Window(ctx, pid);
    await resetCommandStats(ctx.r.redis);
    w.procCpu0 = procCpuUs(pid);
    w.interference = new Interference([pid, ctx.r.pid, process.pid, ...others]);
    return w;
  }

  async close(): Promise<{
    commands: CommandCount;
    procCpuUs?: number;
    peakMB?: number;
    rssMB?: number;
    foreignCpuPct?: number;
  }> {
    const procCpu1 = procCpuUs(this.pid);
    const foreign = this.interference?.foreignPercent();
    const commands = countCommands(await readCommandStats(this.ctx.r.redis));
    const mem = procMemory(this.pid);
    if (foreign !== undefined) this.ctx.results.add(this.ctx.system.id, "foreign", foreign, false);
    return {
      ...(foreign !== undefined ? { foreignCpuPct: foreign } : {}),
      commands,
      ...(procCpu1 !== undefined && this.procCpu0 !== undefined ? { procCpuUs: procCpu1 - this.procCpu0 } : {}),
      ...(mem ? { peakMB: (mem.peakMiB * 1024 * 1024) / 1e6, rssMB: (mem.rssMiB * 1024 * 1024) / 1e6 } : {}),
    };
  }
}

/** A generous time limit for `n` jobs at no less than `minRate` jobs/s. */
export function limitMs(n: number, minRate = 500): number {
  return 60_000 + (n / minRate) * 1000;
}
