// 1. Enqueue: bulk (the system's bulk API, 1,000 jobs per round trip) and
// single pushes with 1 and with 50 in flight, timed inside the client process
// around the system's calls only (arguments are built before the clock starts).
// Redis is flushed before each run; afterwards the jobs are counted in Redis.
import { countFor, type BenchConfig } from "../config.js";
import { TEST_CPU } from "../lib/cpu.js";
import type { Command } from "../lib/protocol.js";
import {
  limitMs,
  startClient,
  Window,
  type Figure,
  type RunInfo,
  type ScenarioContext,
  type Session,
} from "./context.js";

export function enqueueFigures(cfg: BenchConfig): Figure[] {
  const c = cfg.counts;
  const ops: Array<{ id: string; n: number; cmd: (n: number) => Command }> = [
    { id: "enqueue.bulk", n: c.bulk, cmd: (n) => ({ op: "bulk", n, batch: c.bulkBatch }) },
    { id: "enqueue.single1", n: c.single1, cmd: (n) => ({ op: "single", n, inflight: 1 }) },
    { id: "enqueue.single50", n: c.single50, cmd: (n) => ({ op: "single", n, inflight: 50 }) },
  ];
  return [{ scenario: "enqueue", name: "enqueue", open: (ctx) => openEnqueue(ctx, ops) }];
}

async function openEnqueue(
  ctx: ScenarioContext,
  ops: Array<{ id: string; n: number; cmd: (n: number) => Command }>,
): Promise<Session> {
  const { cfg, results, system } = ctx;
  const client = await startClient(ctx, TEST_CPU);
  let peak = 0;
  return {
    async run(p: RunInfo) {
      for (const op of ops) {
        const n = countFor(cfg, op.n, p.warmup);
        await ctx.r.redis.flushall();
        const w = await Window.open(ctx, client.pid);
        client.send(op.cmd(n));
        const res = await client.next("result", limitMs(n, 200));
        const m = await w.close();
        const stored = await ctx.family.pending();
        if (stored !== n) throw new Error(`${system.id} ${op.id}: ${stored} jobs in Redis after enqueuing ${n}`);
        const rate = (n / res.ms) * 1000;
        peak = Math.max(peak, m.peakMB ?? 0);
        results.add(system.id, op.id, rate, p.warmup, {
          n,
          ms: res.ms,
          commands: m.commands.byCommand,
          procCpuUs: m.procCpuUs,
          foreignCpuPct: m.foreignCpuPct,
        });
        results.add(system.id, `cmds.${op.id}`, m.commands.total / n, p.warmup);
        results.add(system.id, `cpu.${op.id}`, res.cpuUs / n, p.warmup);
        ctx.log(
          `${op.id} ${p.label}: ${Math.round(rate).toLocaleString("en-US")} jobs/s, ${(m.commands.total / n).toFixed(3)} cmds/job, ${(res.cpuUs / n).toFixed(1)} µs CPU/job`,
        );
      }
    },
    async close() {
      if (peak > 0) results.add(system.id, "rss.enqueue", peak, false);
      await client.stop();
    },
  };
}
