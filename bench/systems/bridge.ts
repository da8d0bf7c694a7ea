// sidekiq-bridge: its Client and Worker, in one variant per fetch strategy.
// A new variant is one line in BRIDGE_VARIANTS: `workerOptions` is merged into
// the Worker's options in the child process (bench/systems/bridge-child.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALT_SRC, bundle, COMPARE_SRC, REPO_ROOT } from "../lib/build.js";
import { Child } from "../lib/child.js";
import { SidekiqFamily } from "./sidekiq-family.js";
import { WORKER_NODE_FLAGS } from "../../src/tools/cli/node-flags.js";
import type { BenchRedis, SystemUnderTest, WorkerSpec } from "./types.js";

export interface BridgeVariant {
  id: string;
  label: string;
  workerOptions: Record<string, unknown>;
  /** Scenarios to leave out: a variant that changes only the worker skips "enqueue" (same Client). */
  skip?: string[];
  /** Another copy of src/ to build this variant from (default: this tree's, or BENCH_BRIDGE_SRC). */
  src?: string;
  /** V8 flags for the worker process: those `sidekiq-bridge worker` starts node with. */
  nodeFlags?: readonly string[];
  /** V8 flags for the client process (none by default: a library's client runs under its application's). */
  clientNodeFlags?: readonly string[];
}

const CLIENT_FLAGS = (process.env.BENCH_CLIENT_NODE_FLAGS ?? "").split(" ").filter(Boolean);

const COMPARE_FETCH = process.env.BENCH_COMPARE_FETCH === "reliable" ? "reliable" : "basic";

export const BRIDGE_VARIANTS: BridgeVariant[] = [
  {
    id: "bridge",
    label: "sidekiq-bridge (basic fetch)",
    workerOptions: { fetch: "basic" },
    nodeFlags: WORKER_NODE_FLAGS,
  },
  {
    id: "bridge-reliable",
    label: "sidekiq-bridge (reliable fetch)",
    workerOptions: { fetch: "reliable" },
    skip: ["enqueue"],
    nodeFlags: WORKER_NODE_FLAGS,
  },
  // BENCH_RELIABLE_TWO_LANES=1: reliable fetch with two fetch lanes at every
  // concurrency (the default takes the second from concurrency 4, from 16
  // with fetchAhead: false), to weigh bigger batches (fewer commands)
  // against the overlap of two lanes.
  ...(process.env.BENCH_RELIABLE_TWO_LANES
    ? [
        {
          id: "bridge-reliable-2lanes",
          label: "sidekiq-bridge (reliable fetch, 2 fetch lanes)",
          workerOptions: { fetch: "reliable", fetchLanes: 2 },
          skip: ["enqueue"],
          nodeFlags: WORKER_NODE_FLAGS,
        },
      ]
    : []),
  // BENCH_BASIC_LANES=N: basic fetch with N fetch lanes at every concurrency,
  // beside the default's, to weigh batch size (commands a job) against overlap.
  ...(process.env.BENCH_BASIC_LANES
    ? [
        {
          id: "bridge-lanes",
          label: `sidekiq-bridge (basic fetch, ${process.env.BENCH_BASIC_LANES} fetch lanes)`,
          workerOptions: { fetch: "basic", fetchLanes: Number(process.env.BENCH_BASIC_LANES) },
          skip: ["enqueue"],
          nodeFlags: WORKER_NODE_FLAGS,
        },
      ]
    : []),
  // BENCH_CLIENT_NODE_FLAGS="…": this tree's basic fetch again, its client
  // process under those node flags. The client shares Redis' CPU (the bench's
  // placement), so its V8 helper threads take turns with Redis.
  ...(CLIENT_FLAGS.length
    ? [
        {
          id: "bridge-client-flags",
          label: `sidekiq-bridge (basic fetch, client: node ${CLIENT_FLAGS.join(" ")})`,
          workerOptions: { fetch: "basic" },
          nodeFlags: WORKER_NODE_FLAGS,
          clientNodeFlags: CLIENT_FLAGS,
        },
      ]
    : []),
  // The other tree is run as it was: its node flags, if any, are not known
  // here. BENCH_COMPARE_FETCH=reliable compares reliable fetch instead.
  ...(COMPARE_SRC
    ? [
        {
          id: "bridge-compare",
          label: `sidekiq-bridge (${COMPARE_FETCH} fetch) from ${COMPARE_SRC}`,
          workerOptions: { fetch: COMPARE_FETCH },
          src: COMPARE_SRC,
          nodeFlags: (process.env.BENCH_COMPARE_NODE_FLAGS ?? "").split(" ").filter(Boolean),
        },
      ]
    : []),
];

export class BridgeSystem implements SystemUnderTest {
  readonly group = "bridge";
  readonly ours = true;
  private entry = "";
  private version = "";

  constructor(private readonly variant: BridgeVariant) {}

  get id(): string {
    return this.variant.id;
  }
  get label(): string {
    return this.variant.label;
  }
  get skip(): string[] {
    return this.variant.skip ?? [];
  }
  get basicFetch(): boolean {
    const f = this.variant.workerOptions.fetch;
    return f === "basic";
  }

  describe(): string {
    return `sidekiq-bridge ${this.version} (dialect 8.1.7${Object.keys(this.variant.workerOptions).length ? `, worker ${JSON.stringify(this.variant.workerOptions)}` : ""}) on Node ${process.version}${this.variant.nodeFlags?.length ? ` (worker: node ${this.variant.nodeFlags.join(" ")}, as the CLI starts it)` : ""}${this.variant.clientNodeFlags?.length ? ` (client: node ${this.variant.clientNodeFlags.join(" ")})` : ""}${(this.variant.src ?? ALT_SRC) ? `, src/ from ${this.variant.src ?? ALT_SRC}` : ""}`;
  }

  async setup(): Promise<void> {
    this.version = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;
    this.entry = await bundle("systems/bridge-child", this.variant.src ?? ALT_SRC);
  }

  async teardown(): Promise<void> {}

  family(r: BenchRedis): SidekiqFamily {
    return new SidekiqFamily(r);
  }

  spawnClient(r: BenchRedis, cpu: number): Child {
    return new Child(`${this.id} client`, [process.execPath, ...(this.variant.clientNodeFlags ?? []), this.entry], {
      cpu,
      env: { BENCH_ROLE: "client", BENCH_REDIS_URL: r.url },
    });
  }

  spawnWorker(r: BenchRedis, spec: WorkerSpec, cpu: number): Child {
    return new Child(
      `${this.id} worker -c ${spec.concurrency}`,
      [process.execPath, ...(this.variant.nodeFlags ?? []), this.entry],
      {
        cpu,
        env: {
          BENCH_ROLE: "worker",
          BENCH_REDIS_URL: r.url,
          BENCH_CONCURRENCY: String(spec.concurrency),
          BENCH_WORKER_OPTIONS: JSON.stringify(this.variant.workerOptions),
          ...(spec.pollSeconds !== undefined ? { BENCH_POLL: String(spec.pollSeconds) } : {}),
        },
      },
    );
  }
}
