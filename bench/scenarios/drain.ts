// 2. Drain (Sidekiq's bin/sidekiqload method): the jobs are enqueued first,
// where the idle worker cannot see them; the clock starts just before they are
// released (RENAME into the queue, or BullMQ's resume) and stops when the
// worker runs the last one. One worker process per concurrency, kept for its
// warm-up and measured runs. Also: Redis commands per job, worker CPU per job,
// and the worker's peak RSS.
import { countFor, type BenchConfig } from "../config.js";
import { nowMs } from "../lib/protocol.js";
import {
  limitMs,
  startWorker,
  Window,
  type Figure,
  type RunInfo,
  type ScenarioContext,
  type Session,
} from "./context.js";

export function drainFigures(cfg: BenchConfig): Figure[] {
  return cfg.counts.drainConcurrency.map((concurrency) => ({
    scenario: "drain" as const,
    name: `drain c${concurrency}`,
    open: (ctx: ScenarioContext) => openDrain(ctx, concurrency),
  }));
}

async function openDrain(ctx: ScenarioContext, concurrency: number): Promise<Session> {
  const { cfg, results, system, family } = ctx;
  const id = `drain.c${concurrency}`;
  const worker = await startWorker(ctx, { concurrency });
  let peak = 0;
  return {
    async run(p: RunInfo) {
      const n = countFor(cfg, cfg.counts.drain, p.warmup);
      await family.stageDrain(n);
      worker.send({ op: "expect", n, latency: false });
      const armed = await worker.next("armed", 10_000);
      const w = await Window.open(ctx, worker.pid);
      const t0 = nowMs();
      await family.triggerDrain();
      const done = await worker.next("done", limitMs(n, 300));
      const m = await w.close();
      const left = await family.pending();
      if (left !== 0) throw new Error(`${system.id} ${id}: ${left} jobs left after the worker counted ${n}`);
      const ms = done.t - t0;
      const rate = (n / ms) * 1000;
      const cpuUs = done.cpuUs - armed.cpuUs;
      peak = Math.max(peak, m.peakMB ?? 0);
      results.add(system.id, id, rate, p.warmup, {
        n,
        ms,
        commands: m.commands.byCommand,
        procCpuUs: m.procCpuUs,
        cpuUs,
        peakMB: m.peakMB,
        rssMB: m.rssMB,
        foreignCpuPct: m.foreignCpuPct,
      });
      results.add(system.id, `cmds.${id}`, m.commands.total / n, p.warmup);
      results.add(system.id, `cpu.${id}`, cpuUs / n, p.warmup);
      ctx.log(
        `${id} ${p.label}: ${Math.round(rate).toLocaleString("en-US")} jobs/s, ${(m.commands.total / n).toFixed(3)} cmds/job, ${(cpuUs / n).toFixed(1)} µs CPU/job, peak RSS ${peak.toFixed(1)} MB, others ${m.foreignCpuPct?.toFixed(0) ?? "?"}% CPU`,
      );
    },
    async close() {
      if (peak > 0) results.add(system.id, `rss.${id}`, peak, false);
      await worker.stop();
    },
  };
}
