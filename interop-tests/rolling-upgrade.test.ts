// Rolling upgrades of a Sidekiq fleet with a Node worker and a Node client in
// it (dialect "auto"), on the real upstream releases: the old release runs,
// the new one starts, the old one gets TERM as a deploy sends it, while both
// sides keep pushing. Nothing is lost, every release's API and Web UI show the
// Node process, and what Node writes (its pushes' times, its heartbeat) moves
// to the new release's only once the last old process has left.
// The four upgrades run side by side, each on its own Redis database.
import { Redis } from "ioredis";
import { describe, expect, inject, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { releaseRules, type LauncherRules } from "../src/core/wire/index.js";
import { sweepTargets, targetForVersion } from "../harness/versions.js";
import { allocateDb, beatNow, selected, waitFor } from "./support/harness.js";
import {
  NodeProducer,
  PROBE_QUEUE,
  QUEUE,
  ReleaseSide,
  runsOf,
  timeUnit,
  type ReleaseView,
  type UpgradeCase,
} from "./support/rolling-upgrade.js";

const UPGRADES: UpgradeCase[] = [
  { from: "6.5.12", to: "7.0.9", fromProfile: "6.4.1", subject: "the 7.0 launcher (weights, embedded)" },
  { from: "7.3.10", to: "8.0.10", fromProfile: "7.3.10", subject: "times in integer milliseconds" },
  { from: "8.0.8", to: "8.0.10", fromProfile: "8.0.8", subject: "`capsules` in the process info" },
  {
    from: "8.0.10",
    to: "8.1.7",
    fromProfile: "8.0.10",
    subject: "the `concurrency` hash field",
    // 8.1 moved `concurrency` out of `info` (8.1.7 launcher.rb:179), and 8.0.10's busy.erb:85
    // rounds process['concurrency']: Ruby's own 8.1 process breaks 8.0's /busy; its ProcessSet still reads.
    oldBusyFailsBesideNew: /^NoMethodError: undefined method `round' for nil/,
  },
];

/** The keys of `info` a launcher of these rules writes that tell one release's shape from another's. */
function shapeKeys(rules: LauncherRules): string[] {
  return [
    ...(rules.concurrencyField ? [] : ["concurrency"]),
    ...(rules.capsules ? ["capsules"] : []),
    ...(rules.weights !== "none" ? ["weights"] : []),
    ...(rules.embedded ? ["embedded"] : []),
  ].sort();
}
const SHAPE = ["capsules", "concurrency", "embedded", "weights"];

const available = sweepTargets(selected()).map((t) => t.version);
const runnable = UPGRADES.filter((u) => available.includes(u.from) && available.includes(u.to));

describe.concurrent("rolling upgrade with Node in the fleet", () => {
  if (runnable.length === 0) it.skip("not run: SIDEKIQ_VERSIONS selects none of the upgrades' releases", () => {});
  for (const u of runnable) {
    it(`${u.from} → ${u.to}: ${u.subject}`, async () => {
      const db = await allocateDb();
      const url = `${inject("harness").redisUrl}/${db}`;
      const redis = new Redis(url, { maxRetriesPerRequest: 3 });
      const oldSide = new ReleaseSide(targetForVersion(u.from), db, redis);
      const newSide = new ReleaseSide(targetForVersion(u.to), db, redis);
      const before = releaseRules(u.fromProfile);
      const after = releaseRules(u.to);
      // Each upgrade changes what Node must write: the checks below would pass unchanged otherwise.
      expect(
        before.payload.time !== after.payload.time ||
          shapeKeys(before.launcher).join() !== shapeKeys(after.launcher).join(),
      ).toBe(true);
      // autoRefreshMs 0: every beat and push reads the fleet, so each check sees the fleet as it is.
      const nodeOpts = { redis: url, dialect: "auto" as const, autoRefreshMs: 0 };
      const worker = new Worker({ ...nodeOpts, queues: [QUEUE], concurrency: 3, timeout: 5, tag: "node" });
      const client = new Client(nodeOpts);
      const rec = new Redis(url, { maxRetriesPerRequest: 3 });
      worker.register("UpgradeJob", async (_args, ctx) => {
        const entry = { jid: ctx.jid, by: "node", created_at: ctx.record.raw("created_at") };
        await rec.rpush("upgrade:ran", JSON.stringify(entry));
      });
      let producer: NodeProducer | undefined;
      try {
        await oldSide.start();
        await worker.start();
        producer = new NodeProducer(client);
        const id = worker.identity;
        const probe = async () => (await client.job("UpgradeJob", { queue: PROBE_QUEUE }).performAsync("probe", 0))!;
        const expectNode = (v: ReleaseView, profile: string, probeUnit: string, busyFails?: RegExp) => {
          if (busyFails) expect(v.busy).toMatch(busyFails);
          else {
            expect(v.busy, `${v.release}'s /busy`).toBe(200);
            expect(v.busyShowsNode, `${v.release}'s /busy shows the Node process`).toBe(true);
          }
          expect(v.node?.version, `${v.release}'s ProcessSet`).toMatch(new RegExp(`^${profile}-sidekiq-bridge\\.`));
          expect(v.node?.concurrency).toBe(3);
          expect(v.infoKeys.filter((k) => SHAPE.includes(k))).toEqual(shapeKeys(releaseRules(profile).launcher));
          expect(v.node?.capsules != null).toBe(releaseRules(profile).launcher.capsules);
          // The release reads the probe's created_at right (a unit misread is decades off).
          expect(v.probe!.createdAtClass).toBe(probeUnit === "millis" ? "Integer" : "Float");
          expect(Math.abs(v.probe!.createdAt - Date.now() / 1000)).toBeLessThan(86_400);
        };

        // The old release alone beside Node.
        expect((await client.profile()).version).toBe(u.fromProfile);
        expectNode(await oldSide.view(id, await probe()), u.fromProfile, before.payload.time);

        // The new release starts: both are live, Node still writes what the old one reads.
        await newSide.start();
        await producer.pushes(5);
        await beatNow(worker);
        expect((await client.profile()).version).toBe(u.fromProfile);
        const overlapProbe = await probe();
        const [oldView, newView] = await Promise.all([oldSide.view(id, overlapProbe), newSide.view(id, overlapProbe)]);
        expectNode(oldView, u.fromProfile, before.payload.time, u.oldBusyFailsBesideNew);
        expectNode(newView, u.fromProfile, before.payload.time);

        // The deploy sends TERM to the old process: every push that started before reads it live.
        const pushedWithOld = producer.jids.length;
        await oldSide.server!.stop("SIGTERM");
        await oldSide.stopProducer();
        await waitFor(
          "Node's client to follow the fleet",
          async () => (await client.profile()).version === u.to || undefined,
        );
        await waitFor("Node's heartbeat to follow the fleet", async () => {
          await beatNow(worker);
          const info = JSON.parse((await redis.hget(id, "info"))!) as { version: string };
          return info.version.startsWith(`${u.to}-`) || undefined;
        });
        expectNode(await newSide.view(id, await probe()), u.to, after.payload.time);

        // Keep going a little, then count.
        await producer.pushes(10);
        await producer.stop();
        await newSide.stopProducer();
        const pushed = [...(await redis.lrange("upgrade:pushed", 0, -1)), ...producer.jids];
        const runs = await runsOf(redis, pushed);
        expect(runs.length, "each pushed job ran exactly once").toBe(pushed.length);
        expect(new Set(runs.map((r) => r.jid)).size).toBe(pushed.length);
        expect([...new Set(runs.map((r) => r.by))].filter((b) => ![u.from, u.to, "node"].includes(b))).toEqual([]);
        // What Node's client wrote, job by job: the old unit while the old process lived.
        const unitOf = new Map(runs.map((r) => [r.jid, timeUnit(r.created_at)]));
        const nodeUnits = producer.jids.map((j) => unitOf.get(j));
        expect(new Set(nodeUnits.slice(0, pushedWithOld))).toEqual(new Set([before.payload.time]));
        expect(nodeUnits.at(-1)).toBe(after.payload.time);
      } finally {
        await producer?.stop();
        await worker.stop();
        await client.close();
        await Promise.all([oldSide.server?.stop(), newSide.server?.stop()]);
        rec.disconnect();
        redis.disconnect();
      }
    });
  }
});
