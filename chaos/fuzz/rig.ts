// What one release's fuzz run needs: its Ruby (the oracle script, run once
// per batch of thousands of cases), and three Redis databases Node and Ruby
// both reach: `work` (the operations, then the records Ruby reads back),
// `other` (an import's target; Node's pushes) and `worker` (a real worker's).
import type { Redis } from "ioredis";
import type { SidekiqBackend, SidekiqProcess, StartSidekiqOptions } from "../../harness/backend.js";
import type { SidekiqTarget } from "../../harness/versions.js";

export type Slot = "work" | "other" | "worker";

export interface FuzzRig {
  target: SidekiqTarget;
  backend: SidekiqBackend;
  /** A Node client on a slot's database. */
  redis(slot: Slot): Redis;
  /** The slot's database as Node's URL. */
  nodeUrl(slot: Slot): string;
  /** The slot's database as Ruby sees it. */
  rubyUrl(slot: Slot): string;
  /** Starts a real `sidekiq` server (stopped by whoever made the rig). */
  startSidekiq(opts: StartSidekiqOptions): Promise<SidekiqProcess>;
}

const MARKER = "__BRIDGE_RESULT__ ";

/** One oracle request: the steps run in order by one Ruby process; returns each step's result. */
export async function oracle<T extends unknown[]>(rig: FuzzRig, steps: Array<Record<string, unknown>>): Promise<T> {
  const r = await rig.backend.runRuby(rig.target, "fuzz/oracle.rb", [], {
    input: JSON.stringify({ steps }),
    env: { REDIS_URL: rig.rubyUrl("work") },
    timeoutMs: 1_800_000,
  });
  const line = r.stdout.split("\n").find((l) => l.startsWith(MARKER));
  if (r.code !== 0 || line === undefined)
    throw new Error(
      `the fuzz oracle failed on Sidekiq ${rig.target.version} (exit ${r.code}):\n${r.stderr.slice(-4000)}`,
    );
  return JSON.parse(line.slice(MARKER.length)) as T;
}
