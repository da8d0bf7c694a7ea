// A payload Ruby wrote survives Node's rewrite, and a real
// Ruby worker receives the very same args, value and Ruby class.
import { expect, it } from "vitest";
import { applyFailure, JobRecord, secondsString, profileForVersion } from "../src/core/wire/index.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { between } from "./support/between.js";

const ARGS_RUBY = `[2**64 + 1, 1.0, -0.5, "é\\u2028", {"a" => [], "b" => {}}, nil, true]`;

interface Received {
  class: string;
  jid: string;
  args_typed: unknown;
  args_json: string;
  job: Record<string, unknown>;
}

describeEachSidekiq("lossless rewrite of a Ruby payload", (sk) => {
  it("Node rewrites a Ruby job with retry fields; Ruby runs it with args equal in value and class", async () => {
    await sk.startSidekiq({ queues: ["interop"], concurrency: 2 });
    // Ruby pushes to a queue no server reads, so Node can take it.
    const pushed = await sk.ruby<{ jid: string; typed: unknown; json: string }>(`
      args = ${ARGS_RUBY}
      jid = Sidekiq::Client.push("class" => "RecordJob", "queue" => "staging", "args" => args)
      {"jid" => jid, "typed" => Bridge.typed(args), "json" => JSON.generate(args)}
    `);
    const raw = await sk.redis.rpop("queue:staging");
    expect(raw).toBeTruthy();
    const rec = JobRecord.parse(raw!);
    expect(rec.raw("args")).toBe(pushed.json);
    expect((rec.get("args") as unknown[])[0]).toBe(18446744073709551617n);

    // The same rewrite Sidekiq's JobRetry makes, into the retry set, due now.
    const profile = profileForVersion(sk.target.version);
    rec.set("retry_queue", "interop");
    const count = applyFailure(rec, { errorClass: "RuntimeError", message: "failed in Node" }, profile);
    expect(count).toBe(0);
    const rewritten = rec.toString();
    // Every original member keeps its bytes and place (queue took retry_queue); new fields are appended.
    const before = JobRecord.parse(raw!);
    expect(rec.keys().slice(0, before.keys().length)).toEqual(before.keys());
    for (const k of before.keys()) if (k !== "queue") expect(rec.raw(k)).toBe(before.raw(k));
    expect(rewritten).toContain(`"args":${pushed.json}`);
    await sk.redis.zadd("retry", secondsString(Date.now()), rewritten);

    // Ruby's own poller promotes it, and a real worker runs it.
    const got = await waitFor("the job to run in Ruby", async () => {
      const items = await sk.redis.lrange("bridge:received", 0, -1);
      return items.map((s) => JSON.parse(s) as Received).find((r) => r.jid === pushed.jid);
    });
    expect(got.args_typed).toEqual(pushed.typed);
    expect(got.args_json).toBe(pushed.json);
    expect(got.job.retry_count).toBe(0);
    expect(got.job.error_class).toBe("RuntimeError");
    expect(got.job.queue).toBe("interop");
  });

  it("Ruby's API reads Node's retry fields and times in this release's units", async () => {
    const t0 = Date.now() / 1000;
    const raw = (await sk.ruby<string>(`
      Sidekiq::Client.push("class" => "RecordJob", "queue" => "parked", "args" => [1])
      Sidekiq.redis { |r| r.rpop("queue:parked") }
    `))!;
    const rec = JobRecord.parse(raw);
    applyFailure(rec, { errorClass: "TypeError", message: "boom", backtrace: ["a.js:1", "b.js:2"] }, sk.target.version);
    rec.set("backtrace", true);
    // Parked an hour ahead so no poller takes it while Ruby looks.
    const failedByMs = Date.now();
    const failedBy = failedByMs / 1000;
    await sk.redis.zadd("retry", secondsString(failedByMs + 3_600_000), rec.toString());
    const seen = await sk.ruby<{ count: number; klass: string; failed: number; created: number; at: number }>(`
      e = Sidekiq::RetrySet.new.find_job(${JSON.stringify(rec.get("jid"))})
      failed = e["failed_at"]
      failed = failed.is_a?(Float) ? failed : failed / 1000.0
      {"count" => e["retry_count"], "klass" => e["error_class"], "failed" => failed,
       "created" => e.created_at.to_f, "at" => e.at.to_f}
    `);
    // Bracketed by the steps that wrote them, not by a margin a loaded machine can exceed.
    const eps = 0.002;
    expect(seen.count).toBe(0);
    expect(seen.klass).toBe("TypeError");
    between(seen.created, t0, seen.failed, "created_at", eps);
    between(seen.failed, seen.created, failedBy, "failed_at", eps);
    expect(seen.at).toBeCloseTo(failedBy + 3600, 2);
  });
});
