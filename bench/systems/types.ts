// What the scenarios need from a system under test. Each system runs its own
// client and worker processes (pinned by the harness); the "queue family"
// prepares the Redis state those processes find (jobs waiting unseen, due
// scheduled jobs) without timing it.
import type { Redis } from "ioredis";
import type { Child } from "../lib/child.js";

export interface BenchRedis {
  url: string;
  /** redis-server's pid (its CPU counts as ours in the interference figure). */
  pid: number;
  /** The harness's own connection (commandstats, staging, triggers). */
  redis: Redis;
}

export interface WorkerSpec {
  concurrency: number;
  /** Average scheduled-poll interval in seconds, where the system has a poller. */
  pollSeconds?: number;
}

/** How jobs are laid out in Redis for one family of systems (Sidekiq's format, BullMQ's). */
export interface QueueFamily {
  /** Puts `n` no-op jobs where a running worker does not see them yet. */
  stageDrain(n: number): Promise<void>;
  /** Makes the staged jobs visible at once (the timed drain starts just before). */
  triggerDrain(): Promise<void>;
  /** Schedules `n` no-op jobs all due at `dueMs` (epoch ms). */
  scheduleBurst(n: number, dueMs: number): Promise<void>;
  /** Jobs still waiting (queued, staged or scheduled): 0 after a complete run. */
  pending(): Promise<number>;
  close(): Promise<void>;
}

export interface SystemUnderTest {
  /** Scenarios this system leaves out (a bridge variant that only changes the worker skips "enqueue"). */
  skip?: readonly string[];
  /** Stable id used in BENCH_SYSTEMS, JSON and ratios ("bridge", "ruby", "bullmq"). */
  id: string;
  /** Systems of one family share a name in BENCH_SYSTEMS ("bridge" selects every bridge variant). */
  group: string;
  label: string;
  /** Ours: ratios ours / theirs are computed for these. */
  ours: boolean;
  /** Ours with Sidekiq's basic fetch. */
  basicFetch?: boolean;
  /** Filled in by setup(): versions of what runs. */
  describe(): string;
  setup(): Promise<void>;
  teardown(): Promise<void>;
  family(r: BenchRedis): QueueFamily;
  spawnClient(r: BenchRedis, cpu: number): Child;
  spawnWorker(r: BenchRedis, spec: WorkerSpec, cpu: number): Child;
}
