// The performance targets, judged on medians of the same run (runs of all
// systems interleaved). Reliable fetch is what a worker gets by default, so it
// carries the drain targets against Ruby and BullMQ as well as basic fetch.
import type { RssFloor } from "../measure/rss-floor.js";
import type { Results } from "./model.js";

export type TargetStatus = "met" | "missed" | "not measured";

export interface TargetResult {
  system: string;
  target: string;
  status: TargetStatus;
  detail: string;
}

const x = (v: number) => `${v.toFixed(2)}x`;

/** Drain ratios against the other systems at concurrency 10 (and 50 for reliable fetch). */
const DRAIN_TARGETS = {
  basic: { concurrency: [10], ruby: 3.5, bullmq: 3 },
  reliable: { concurrency: [10, 50], ruby: 3, bullmq: 2.5 },
};
/** Reliable fetch within 15% of basic fetch's drain rate. */
const RELIABLE_VS_BASIC = 0.85;
/** Redis commands per job while draining: basic fetch's BRPOP bound, reliable fetch's batches. */
const CMDS_BASIC = 1.01;
const CMDS_RELIABLE_BUSY = 0.5;
/** Peak RSS of a worker draining at concurrency 10, started as the CLI starts it. */
const RSS_MB = 64;

/** `floor`: node alone and node with ioredis required, with the worker's node flags, shown beside the RSS target. */
export function judgeTargets(results: Results, floor?: RssFloor): TargetResult[] {
  const out: TargetResult[] = [];
  const med = (s: string, m: string) => results.median(s, m);
  for (const o of results.systems.filter((s) => s.ours)) {
    const add = (target: string, ok: boolean | undefined, detail: string) =>
      out.push({ system: o.id, target, status: ok === undefined ? "not measured" : ok ? "met" : "missed", detail });
    const rel = (metric: string, other: string, factor: number, higherBetter: boolean, target: string) => {
      const a = med(o.id, metric);
      const b = med(other, metric);
      if (a === undefined || b === undefined) return add(target, undefined, "–");
      const r = a / b;
      const fmt = (v: number) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(3));
      add(target, higherBetter ? r >= factor : r <= factor, `${fmt(a)} vs ${fmt(b)}: ${x(r)}`);
    };
    const drain = o.basicFetch ? DRAIN_TARGETS.basic : DRAIN_TARGETS.reliable;
    for (const c of drain.concurrency) {
      rel(`drain.c${c}`, "ruby", drain.ruby, true, `drain at concurrency ${c} ≥ ${drain.ruby}x Ruby Sidekiq 8.1.7`);
      rel(`drain.c${c}`, "bullmq", drain.bullmq, true, `drain at concurrency ${c} ≥ ${drain.bullmq}x BullMQ`);
      if (!o.basicFetch)
        rel(`drain.c${c}`, "bridge", RELIABLE_VS_BASIC, true, `drain at concurrency ${c} within 15% of basic fetch`);
    }
    {
      const per = [1, 10, 50]
        .map((c) => [c, med(o.id, `cmds.drain.c${c}`)] as const)
        .filter(([, v]) => v !== undefined) as Array<readonly [number, number]>;
      const fmt = (rows: typeof per) => rows.map(([c, v]) => `c${c} ${v.toFixed(4)}`).join(", ") || "–";
      const worst = (rows: typeof per) => (rows.length ? Math.max(...rows.map(([, v]) => v)) : undefined);
      if (o.basicFetch) {
        const w = worst(per);
        add(
          `basic fetch ≤ ${CMDS_BASIC} Redis commands per job (drains)`,
          w === undefined ? undefined : w <= CMDS_BASIC,
          fmt(per),
        );
      } else {
        // Batches into the working hash, acknowledged many at a time by one HDEL.
        const busy = per.filter(([c]) => c >= 10);
        const w = worst(busy);
        add(
          `reliable fetch ≤ ${CMDS_RELIABLE_BUSY} Redis commands per job at concurrency 10 and 50`,
          w === undefined ? undefined : w <= CMDS_RELIABLE_BUSY,
          fmt(busy),
        );
      }
    }
    rel("latency.p99", "ruby", 1, false, "enqueue-to-start p99 at 1,000 jobs/s no higher than Ruby's");
    rel("latency.p50", "ruby", 1, false, "enqueue-to-start p50 at 1,000 jobs/s no higher than Ruby's");
    rel("enqueue.bulk", "ruby", 1, true, "bulk enqueue ≥ Ruby's push_bulk");
    rel("enqueue.single50", "bullmq", 2, true, "single enqueue, 50 in flight ≥ 2x BullMQ's add");
    rel("scheduled.burst", "ruby", 1, false, "scheduled burst of 10,000 no later than Ruby");
    const c10 = med(o.id, "rss.drain.c10");
    const all = [1, 10, 50, "latency", "scheduled"]
      .map((c) => med(o.id, typeof c === "number" ? `rss.drain.c${c}` : `rss.${c}`))
      .filter((v): v is number => v !== undefined);
    add(
      `worker peak RSS ≤ ${RSS_MB} MB draining at concurrency 10`,
      c10 === undefined ? undefined : c10 <= RSS_MB,
      c10 === undefined
        ? "–"
        : `${c10.toFixed(1)} MB (all worker runs: up to ${Math.max(...all).toFixed(1)} MB)` +
            (floor
              ? `; before any sidekiq-bridge code, node alone peaks at ${floor.nodeMiB.toFixed(1)} MB and node with ioredis required at ${floor.ioredisMiB.toFixed(1)} MB, and an empty event loop with ioredis connected at ${floor.connectedMiB.toFixed(1)} MB (same node flags)`
              : ""),
    );
  }
  return out;
}
