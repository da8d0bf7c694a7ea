// The real Sidekiq Web UI, rendered in the root filesystem, shows a
// real Node worker: /busy (process and running job), /retries and /morgue
// (jobs Node failed), /metrics (Node's job classes).
import { expect, it } from "vitest";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq, waitFor, type SidekiqContext, beatNow } from "./support/harness.js";

async function render(sk: SidekiqContext, path: string): Promise<{ status: number; body: string }> {
  return sk.ruby(`
    require "sidekiq/web"
    require "rack/mock"
    res = Rack::MockRequest.new(Sidekiq::Web.new).get(${JSON.stringify(path)}, "rack.session" => {})
    {"status" => res.status, "body" => res.body.to_s.force_encoding("UTF-8").scrub}
  `);
}

describeEachSidekiq("server: the real Web UI shows the Node worker", (sk) => {
  it("/busy, /retries, /morgue and /metrics return 200 with the Node process and its jobs", async () => {
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["web"],
      concurrency: 3,
      tag: "node-web",
      scheduler: false,
      timeout: 3,
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    w.register("SlowNodeJob", () => gate);
    w.register("RetryNodeJob", () => {
      throw new RangeError("retry me");
    });
    w.register("DeadNodeJob", () => {
      throw new RangeError("dead on arrival");
    });
    await w.start();
    try {
      const jids = await sk.ruby<string[]>(`[
        Sidekiq::Client.push("class" => "RetryNodeJob", "queue" => "web", "args" => [1]),
        Sidekiq::Client.push("class" => "DeadNodeJob", "queue" => "web", "args" => [2], "retry" => 0),
        Sidekiq::Client.push("class" => "SlowNodeJob", "queue" => "web", "args" => [3])]`);
      await waitFor("the failures to be recorded", async () =>
        (await sk.redis.zcard("retry")) === 1 && (await sk.redis.zcard("dead")) === 1 ? true : undefined,
      );
      // The slow job itself: a failed job stays in dump() until its acknowledgement
      // is written, which can be after its retry or dead entry is visible.
      await waitFor("the slow job to start", async () => (w.dump().some((d) => d.jid === jids[2]) ? true : undefined));
      await beatNow(w);

      const busy = await render(sk, "/busy");
      expect(busy.status).toBe(200);
      expect(busy.body).toContain(w.identity.split(":")[0]);
      expect(busy.body).toContain("node-web");
      expect(busy.body).toContain("SlowNodeJob");
      const retries = await render(sk, "/retries");
      expect(retries.status).toBe(200);
      expect(retries.body).toContain("RetryNodeJob");
      expect(retries.body).toContain("retry me");
      const morgue = await render(sk, "/morgue");
      expect(morgue.status).toBe(200);
      expect(morgue.body).toContain("DeadNodeJob");
      expect(morgue.body).toContain(jids[1]);

      release();
      await waitFor("the slow job to finish", async () => (w.dump().length === 0 ? true : undefined));
      await beatNow(w); // flushes metrics
      const metrics = await render(sk, "/metrics");
      if (sk.target.dialect === 6) {
        expect(metrics.status).toBe(404); // Sidekiq 6.4 has no Metrics tab
      } else {
        expect(metrics.status).toBe(200);
        expect(metrics.body).toContain("SlowNodeJob");
        expect(metrics.body).toContain("RetryNodeJob");
      }
    } finally {
      release();
      await w.stop();
    }
  });
});
