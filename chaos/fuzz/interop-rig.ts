// A fuzz rig inside an interop test: the suite's Sidekiq release and backend,
// its database as `work`, and two more databases of this run.
import { Redis } from "ioredis";
import { afterAll } from "vitest";
import { allocateDb, backend, type SidekiqContext } from "../../interop-tests/support/harness.js";
import type { FuzzRig, Slot } from "./rig.js";

/** Call in a describe block; the returned function gives the rig once the suite's database is known. */
export function rigFor(sk: SidekiqContext): () => Promise<FuzzRig> {
  let made: Promise<FuzzRig> | undefined;
  const clients: Redis[] = [];
  afterAll(() => {
    for (const c of clients) c.disconnect();
  });
  const make = async (): Promise<FuzzRig> => {
    const dbs: Record<Slot, number> = { work: sk.db, other: await allocateDb(), worker: await allocateDb() };
    const base = sk.url.slice(0, sk.url.lastIndexOf("/"));
    const redis = new Map<Slot, Redis>([["work", sk.redis]]);
    return {
      target: sk.target,
      backend: backend(),
      redis(slot) {
        let r = redis.get(slot);
        if (!r) {
          r = new Redis(`${base}/${dbs[slot]}`);
          clients.push(r);
          redis.set(slot, r);
        }
        return r;
      },
      nodeUrl: (slot) => `${base}/${dbs[slot]}`,
      rubyUrl: (slot) => backend().rubyRedisUrl(dbs[slot]),
      startSidekiq: (opts) => sk.startSidekiq(opts),
    };
  };
  return () => (made ??= make());
}
