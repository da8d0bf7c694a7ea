// 4. A burst of scheduled jobs all due at the same moment: the time from that
// moment until the worker has run the last of them (poller detection,
// promotion to the queue, fetch and run). Sidekiq-format systems poll: both
// sidekiq-bridge and Ruby Sidekiq get the same poll_interval_average
// (counts.pollSeconds), and the first due time leaves room for the poller's
// random initial wait (up to 5 s). BullMQ wakes on its delayed-job marker.
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

/** Time to write the burst before it comes due. */
const LEAD_MS = 2500;
/** Sidekiq's poller sleeps up to 5 s (5 * rand) before its first pass, even with poll_interval_average. */
const INITIAL_WAIT_MS = 5500;

export function scheduledFigures(_cfg: BenchConfig): Figure[] {
  return [{ scenario: "scheduled", name: "scheduled", open: openScheduled }];
}

async function openScheduled(ctx: ScenarioContext): Promise<Session> {
  const { cfg, results, system, family } = ctx;
  const c = cfg.counts;
  const worker = await startWorker(ctx, { concurrency: c.scheduledConcurrency, pollSeconds: c.pollSeconds });
  const startedAt = nowMs();
  let peak = 0;
  return {
    async run(p: RunInfo) {
      const n = countFor(cfg, c.scheduled, p.warmup);
      worker.send({ op: "expect", n, latency: false });
      const armed = await worker.next("armed", 10_000);
      const due = Math.max(nowMs() + LEAD_MS, startedAt + INITIAL_WAIT_MS);
      await family.scheduleBurst(n, due);
      const written = nowMs();
      if (written > due - 200)
        throw new Error(
          `${system.id}: writing ${n} scheduled jobs took until ${Math.round(written - due)} ms before they came due`,
        );
      const w = await Window.open(ctx, worker.pid);
      const done = await worker.next("done", limitMs(n, 100) + (due - written));
      const m = await w.close();
      const left = await family.pending();
      if (left !== 0) throw new Error(`${system.id}: ${left} scheduled jobs left after the worker counted ${n}`);
      const ms = done.t - due;
      const cpuUs = done.cpuUs - armed.cpuUs;
      peak = Math.max(peak, m.peakMB ?? 0);
      results.add(system.id, "scheduled.burst", ms, p.warmup, {
        n,
        dueMs: due,
        commands: m.commands.byCommand,
        procCpuUs: m.procCpuUs,
        cpuUs,
        foreignCpuPct: m.foreignCpuPct,
      });
      results.add(system.id, "cmds.scheduled", m.commands.total / n, p.warmup);
      results.add(system.id, "cpu.scheduled", cpuUs / n, p.warmup);
      ctx.log(
        `scheduled ${p.label}: last of ${n} ran ${Math.round(ms)} ms after they came due, ${(m.commands.total / n).toFixed(2)} cmds/job, others ${m.foreignCpuPct?.toFixed(0) ?? "?"}% CPU`,
      );
    },
    async close() {
      if (peak > 0) results.add(system.id, "rss.scheduled", peak, false);
      await worker.stop();
    },
  };
}
