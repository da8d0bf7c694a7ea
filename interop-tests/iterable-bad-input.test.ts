// Unreadable iteration state: an `it-<jid>` hash whose cursor is not JSON
// (and, on Sidekiq 8, a job cancelled before it ever ran, whose hash has no
// cursor at all). A real sidekiq fails such a job through the retry path
// without touching the hash; the Node worker does the same, logs why, and
// keeps running.
import { randomBytes } from "node:crypto";
import { expect, it } from "vitest";
import type { Logger } from "../src/core/logging/logger.js";
import { describeEachSidekiq, type SidekiqContext, waitFor } from "./support/harness.js";
import { hooks, iterated, nodeWorker, startRuby } from "./support/iterable-twin.js";

const QUEUE = "iter-bad";
const newJid = () => randomBytes(12).toString("hex");

const push = (sk: SidekiqContext, jid: string) =>
  sk.ruby(
    `Sidekiq::Client.push("class" => "BridgeIterableJob", "queue" => ${JSON.stringify(QUEUE)}, "args" => [3, 0], "jid" => ${JSON.stringify(jid)})`,
  );

/** Corrupt state for one jid: a cursor that is not JSON, or (Sidekiq 8) only a cancel! mark. */
async function corrupt(sk: SidekiqContext, jid: string, kind: "not-json" | "cancelled-before-start"): Promise<void> {
  if (kind === "not-json") await sk.redis.hset(`it-${jid}`, { ex: "1", c: "not json{", rt: "1.5" });
  else await sk.ruby(`Sidekiq::Client.new.cancel!(${JSON.stringify(jid)})`);
}

const retried = (sk: SidekiqContext) =>
  sk.ruby<Record<string, string>>(`Sidekiq::RetrySet.new.to_h { |e| [e.jid, e["error_class"]] }`);

describeEachSidekiq(
  "IterableJob: unreadable it-<jid> state is failed as Ruby fails it",
  (sk) => {
    it("Ruby and Node both retry the job with Ruby's error, leave the state alone, and keep running", async () => {
      const kinds =
        sk.target.dialect >= 8 ? (["not-json", "cancelled-before-start"] as const) : (["not-json"] as const);
      const rubyJids = kinds.map(() => newJid());
      const nodeJids = kinds.map(() => newJid());
      for (const [i, kind] of kinds.entries()) {
        await corrupt(sk, rubyJids[i]!, kind);
        await corrupt(sk, nodeJids[i]!, kind);
      }
      const before = async (jids: string[]) => Promise.all(jids.map((j) => sk.redis.hgetall(`it-${j}`)));
      const stateBefore = await before([...rubyJids, ...nodeJids]);

      const ruby = await startRuby(sk, QUEUE);
      for (const jid of rubyJids) await push(sk, jid);
      await waitFor("Ruby to fail the jobs", async () => {
        const r = await retried(sk);
        return rubyJids.every((j) => r[j]) ? r : undefined;
      });
      await ruby.stop();

      const lines: string[] = [];
      const logger: Logger = {
        debug() {},
        info() {},
        warn: (m, c) => lines.push(`WARN ${m} ${JSON.stringify(c)}`),
        error: (m, c) => lines.push(`ERROR ${m} ${JSON.stringify(c)}`),
      };
      const w = nodeWorker(sk, QUEUE, logger);
      const good = newJid();
      await w.start();
      try {
        for (const jid of nodeJids) await push(sk, jid);
        const r = await waitFor("Node to fail the jobs", async () => {
          const r = await retried(sk);
          return nodeJids.every((j) => r[j]) ? r : undefined;
        });
        // The same error class as Ruby's, job by job.
        for (const i of kinds.keys()) expect(r[nodeJids[i]!]).toBe(r[rubyJids[i]!]);
        expect(r[nodeJids[0]!]).toBe("JSON::ParserError");
        if (kinds.length > 1) expect(r[nodeJids[1]!]).toBe("TypeError");
        expect(lines.some((l) => l.includes(`it-${nodeJids[0]}`) && l.includes("unreadable"))).toBe(true);
        // The worker keeps running: a sound job after them completes.
        await push(sk, good);
        await waitFor("a sound iterable job to complete", async () =>
          (await hooks(sk, good)).includes("node:complete:1") ? true : undefined,
        );
      } finally {
        await w.stop();
      }
      // Nothing lost: neither side touched the unreadable state.
      expect(await before([...rubyJids, ...nodeJids])).toEqual(stateBefore);
      expect(await iterated(sk, good)).toEqual(["node:0", "node:1", "node:2"]);
      expect(await sk.redis.keys("bridge:iterated:*")).toEqual([`bridge:iterated:${good}`]);
    }, 90_000);
  },
  (t) => t.dialect >= 7,
);
