// 3. Enqueue-to-start latency at a fixed rate: the system's own client (on the
// Redis CPU, leaving the worker's CPU alone) pushes jobs carrying their push
// time; the worker notes, for each, when its job body started. p50, p99 and
// p99.9 per run; the figure is the median over runs.
import { countFor, type BenchConfig } from "../config.js";
import { AUX_CPU } from "../lib/cpu.js";
import { percentile } from "../measure/summary.js";
import {
  limitMs,
  startClient,
  startWorker,
  Window,
  type Figure,
  type RunInfo,
  type ScenarioContext,
  type Session,
} from "./context.js";

export function latencyFigures(_cfg: BenchConfig): Figure[] {
  return [{ scenario: "latency", name: "latency", open: openLatency }];
}

async function openLatency(ctx: ScenarioContext): Promise<Session> {
  const { cfg, results, system } = ctx;
  const c = cfg.counts;
  const worker = await startWorker(ctx, { concurrency: c.latencyConcurrency });
  let client: Awaited<ReturnType<typeof startClient>> | undefined;
  try {
    client = await startClient(ctx, AUX_CPU);
  } catch (e) {
    await worker.stop();
    throw e;
  }
  const cl = client;
  let peak = 0;
  return {
    async run(p: RunInfo) {
      const n = countFor(cfg, c.latencyJobs, p.warmup);
      worker.send({ op: "expect", n, latency: true });
      await worker.next("armed", 10_000);
      const w = await Window.open(ctx, worker.pid, [cl.pid]);
      cl.send({ op: "paced", n, rate: c.latencyRate });
      const sent = await cl.next("result", limitMs(n, 100));
      const done = await worker.next("done", 60_000);
      const m = await w.close();
      const lat = done.latencies ?? [];
      if (lat.length !== n) throw new Error(`${system.id}: ${lat.length} latency samples for ${n} jobs`);
      const p50 = percentile(lat, 50);
      const p99 = percentile(lat, 99);
      const p999 = percentile(lat, 99.9);
      const achieved = (n / sent.ms) * 1000;
      peak = Math.max(peak, m.peakMB ?? 0);
      const detail = {
        n,
        achievedRate: achieved,
        lastPushLateMs: sent.lateMs,
        p90: percentile(lat, 90),
        max: Math.max(...lat),
        commands: m.commands.byCommand,
        foreignCpuPct: m.foreignCpuPct,
        // The worker's own GC pauses in the run, and how many of its 0.1% slowest jobs waited through one (Node workers).
        ...(done.gc ? { workerGc: done.gc } : {}),
      };
      results.add(system.id, "latency.p50", p50, p.warmup, detail);
      results.add(system.id, "latency.p99", p99, p.warmup);
      results.add(system.id, "latency.p999", p999, p.warmup);
      results.add(system.id, "cmds.latency", m.commands.total / n, p.warmup);
      const gc = done.gc;
      const gcText = gc
        ? `; worker GC: ${gc.major.n} full (longest ${gc.major.maxMs.toFixed(1)} ms), ${gc.minor.n} scavenges (longest ${gc.minor.maxMs.toFixed(1)} ms); of the ${gc.slowest} slowest jobs ${gc.slowestOnMajor} waited through a full collection, ${gc.slowestOnMinorOnly} through scavenges only; its event loop's delay p99 ${gc.loopDelay.p99.toFixed(1)} ms, max ${gc.loopDelay.max.toFixed(1)} ms`
        : "";
      ctx.log(
        `latency ${p.label}: p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms, p99.9 ${p999.toFixed(3)} ms, max ${detail.max.toFixed(1)} ms at ${Math.round(achieved)} jobs/s, others ${m.foreignCpuPct?.toFixed(0) ?? "?"}% CPU${gcText}`,
      );
    },
    async close() {
      if (peak > 0) results.add(system.id, "rss.latency", peak, false);
      await cl.stop();
      await worker.stop();
    },
  };
}
