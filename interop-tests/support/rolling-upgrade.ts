// A rolling upgrade of a Sidekiq fleet with Node in it: two releases' Ruby
// processes on one Redis database, producers on both sides, and what each
// release's own API and Web UI show (ruby-fixtures/lib/upgrade_jobs.rb).
import type { Redis } from "ioredis";
import type { SidekiqProcess } from "../../harness/backend.js";
import type { SidekiqTarget } from "../../harness/versions.js";
import type { Client } from "../../src/core/client/client.js";
import { backend, rubyOn, waitFor } from "./harness.js";

export const QUEUE = "upgrade";
/** A queue nobody works: a job Node pushes there stays for the releases' APIs to read. */
export const PROBE_QUEUE = "upgrade-probe";
const LOAD = `require File.join(File.dirname($0), "lib/upgrade_jobs")`;

export interface UpgradeCase {
  from: string;
  to: string;
  /** The dialect "auto" writes while `from` is live (a 6.x heartbeat names no release: client/fleet.ts reads it as 6.4.1). */
  fromProfile: string;
  /** What changes in what Node writes. */
  subject: string;
  /** While both are live, the old release's /busy raises on the new release's own process: the error. */
  oldBusyFailsBesideNew?: RegExp;
}

/** What ruby-fixtures/lib/upgrade_jobs.rb `Upgrade.view` returns. */
export interface ReleaseView {
  release: string;
  node: { version: string; concurrency: number; capsules: Record<string, unknown> | null } | null;
  infoKeys: string[];
  /** The status of /busy, or the error it raised. */
  busy: number | string;
  busyShowsNode: boolean;
  probe: { createdAtClass: string; createdAt: number } | null;
}

/** One release's side of the upgrade: its `sidekiq` server, a producer on its client, its view of Node. */
export class ReleaseSide {
  private readonly ruby;
  private producing?: Promise<number>;
  server?: SidekiqProcess;

  constructor(
    readonly target: SidekiqTarget,
    private readonly db: number,
    private readonly redis: Redis,
  ) {
    // The producer lives as long as the release does: longer than runCaptured's default.
    this.ruby = rubyOn(target, db, 600_000);
  }

  private get stopKey(): string {
    return `upgrade:stop:${this.target.version}`;
  }

  /** Its `sidekiq` server on the upgrade's queue, and a producer on its client; resolves once the server beats. */
  async start(): Promise<void> {
    this.producing = this.ruby.ruby<number>(`${LOAD}\nUpgrade.produce(${JSON.stringify(QUEUE)}, "${this.stopKey}")`);
    this.producing.catch(() => undefined); // awaited in stopProducer
    this.server = await backend().startSidekiq(this.target, {
      queues: [QUEUE],
      concurrency: 3,
      require: "lib/upgrade_jobs.rb",
      env: { REDIS_URL: backend().rubyRedisUrl(this.db) },
    });
    const pid = this.server.pid;
    await waitFor(
      `Sidekiq ${this.target.version}'s heartbeat`,
      async () => {
        for (const id of await this.redis.smembers("processes")) {
          const info = await this.redis.hget(id, "info");
          if (info && (JSON.parse(info) as { pid?: number }).pid === pid) return true;
        }
        return undefined;
      },
      60_000,
      () => this.server!.log(),
    );
  }

  async stopProducer(): Promise<number> {
    await this.redis.set(this.stopKey, "1");
    return this.producing!;
  }

  view(identity: string, probeJid?: string): Promise<ReleaseView> {
    const args = [identity, PROBE_QUEUE, probeJid ?? null].map((a) => JSON.stringify(a)).join(", ");
    return this.ruby.ruby<ReleaseView>(`${LOAD}\nUpgrade.view(${args})`);
  }
}

/** Node's producer: pushes UpgradeJob through `client` until stopped, each jid in order. */
export class NodeProducer {
  readonly jids: string[] = [];
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(client: Client) {
    const job = client.job("UpgradeJob", { queue: QUEUE });
    this.done = (async () => {
      for (let n = 0; !this.stopped; n++) {
        this.jids.push((await job.performAsync("node", n))!);
        await new Promise((r) => setTimeout(r, 20)); // a steady trickle, not a flood
      }
    })();
  }

  /** Resolves once `more` pushes past the current count are done. */
  async pushes(more: number): Promise<void> {
    const target = this.jids.length + more;
    await waitFor(`${more} more Node pushes`, async () => this.jids.length >= target || undefined, 60_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }
}

/** An entry of `upgrade:ran`: each run of UpgradeJob, Ruby's or Node's. */
export interface Ran {
  jid: string;
  by: string;
  created_at: number;
}

/** Waits until every jid of `pushed` has run; returns every run recorded. */
export async function runsOf(redis: Redis, pushed: readonly string[]): Promise<Ran[]> {
  const want = new Set(pushed);
  return waitFor(
    `all ${want.size} pushed jobs to run`,
    async () => {
      const runs = (await redis.lrange("upgrade:ran", 0, -1)).map((s) => JSON.parse(s) as Ran);
      const seen = new Set(runs.map((r) => r.jid));
      return [...want].every((j) => seen.has(j)) ? runs : undefined;
    },
    60_000,
  );
}

/** A payload time's unit as written: integer milliseconds (Sidekiq 8) or float seconds. */
export const timeUnit = (t: number): "millis" | "seconds" => (t > 1e11 ? "millis" : "seconds");
