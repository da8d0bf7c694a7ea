// Rigs for `npm run fuzz`: one throwaway redis-server, the releases' root
// filesystems with this run's copy of ruby-fixtures, three databases per release.
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { installFixtures, LocalBackend, removeFixtures } from "../../harness/local-backend.js";
import { ensureDebianPackages, prepareRootfs } from "../../harness/prepare.js";
import { startServer } from "../../harness/servers.js";
import type { SidekiqProcess } from "../../harness/backend.js";
import type { SidekiqTarget } from "../../harness/versions.js";
import type { FuzzRig, Slot } from "./rig.js";

const SLOTS: readonly Slot[] = ["work", "other", "worker"];

export interface LocalRigs {
  rigs: FuzzRig[];
  close(): Promise<void>;
}

export async function localRigs(targets: readonly SidekiqTarget[]): Promise<LocalRigs> {
  ensureDebianPackages({ "redis-server": "redis-server" });
  const roots = await prepareRootfs(targets);
  const runId = `fuzz-${randomBytes(3).toString("hex")}`;
  const installed = Object.values(roots).map((root) => [root, installFixtures(root, runId)] as const);
  const server = await startServer({ databases: 16 });
  const backend = new LocalBackend(roots, installed[0]![1], join(tmpdir(), runId), "redis://127.0.0.1:" + server.port);
  const clients: Redis[] = [];
  const servers: SidekiqProcess[] = [];
  const rigs = targets.map((target, t): FuzzRig => {
    const db = (slot: Slot) => 1 + t * SLOTS.length + SLOTS.indexOf(slot);
    const redis = new Map<Slot, Redis>();
    return {
      target,
      backend,
      redis(slot) {
        let r = redis.get(slot);
        if (!r) {
          r = new Redis(`${server.url}/${db(slot)}`);
          redis.set(slot, r);
          clients.push(r);
        }
        return r;
      },
      nodeUrl: (slot) => `${server.url}/${db(slot)}`,
      rubyUrl: (slot) => backend.rubyRedisUrl(db(slot)),
      async startSidekiq(opts) {
        const p = await backend.startSidekiq(target, opts);
        servers.push(p);
        return p;
      },
    };
  });
  return {
    rigs,
    async close() {
      await Promise.all(servers.map((s) => s.stop()));
      for (const c of clients) c.disconnect();
      await server.stop();
      for (const [root, inside] of installed) removeFixtures(root, inside);
    },
  };
}
