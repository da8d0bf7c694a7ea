// The performance targets, judged on medians of the same run.
import type { Results } from "./model.js";

export type TargetStatus = "met" | "missed" | "not measured";

export interface TargetResult {
  system: string;
  target: string;
  status: TargetStatus;
  detail: string;
}

const x = (v: number) => `${v.toFixed(2)}x`;

export function judgeTargets(results: Results): TargetResult[] {
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
      add(target, higherBetter ? r >= factor : r <= factor, `${a.toFixed(0)} vs ${b.toFixed(0)}: ${x(r)}`);
    };
    rel("drain.c10", "ruby", 2, true, "drain at concurrency 10 ≥ 2x Ruby Sidekiq 8.1.7");
    rel("drain.c10", "bullmq", 2, true, "drain at concurrency 10 ≥ 2x BullMQ");
    {
      // Basic fetch at most 1.01 Redis commands per job, reliable fetch at most 2.05.
      const [label, limit] = o.basicFetch ? ["basic fetch ≤ 1.01", 1.01] : ["reliable fetch ≤ 2.05", 2.05];
      const per = [1, 10, 50]
        .map((c) => [c, med(o.id, `cmds.drain.c${c}`)] as const)
        .filter(([, v]) => v !== undefined) as Array<readonly [number, number]>;
      const worst = per.length ? Math.max(...per.map(([, v]) => v)) : undefined;
      add(
        `${label} Redis commands per job (drains)`,
        worst === undefined ? undefined : worst <= limit,
        per.map(([c, v]) => `c${c} ${v.toFixed(4)}`).join(", ") || "–",
      );
      if (!o.basicFetch) {
        // Batches into the working hash, acknowledged many at a time by one HDEL.
        const busy = per.filter(([c]) => c >= 10);
        const worstBusy = busy.length ? Math.max(...busy.map(([, v]) => v)) : undefined;
        add(
          "reliable fetch ≤ 0.5 Redis commands per job at concurrency 10 and 50",
          worstBusy === undefined ? undefined : worstBusy <= 0.5,
          busy.map(([c, v]) => `c${c} ${v.toFixed(4)}`).join(", ") || "–",
        );
      }
    }
    rel("enqueue.bulk", "ruby", 1, true, "bulk enqueue ≥ Ruby's push_bulk");
    rel("enqueue.single50", "bullmq", 2, true, "single enqueue, 50 in flight ≥ 2x BullMQ's add");
    rel("scheduled.burst", "ruby", 1, false, "scheduled burst of 10,000 no later than Ruby");
    const rss = [1, 10, 50, "latency", "scheduled"]
      .map((c) => med(o.id, typeof c === "number" ? `rss.drain.c${c}` : `rss.${c}`))
      .filter((v): v is number => v !== undefined);
    const drains = [1, 10, 50].map((c) => med(o.id, `rss.drain.c${c}`)).filter((v): v is number => v !== undefined);
    add(
      "worker RSS < 100 MB while draining",
      drains.length ? Math.max(...drains) < 100 : undefined,
      drains.length
        ? `peak ${Math.max(...drains).toFixed(1)} MB (all worker runs: ${Math.max(...rss).toFixed(1)} MB)`
        : "–",
    );
  }
  return out;
}
