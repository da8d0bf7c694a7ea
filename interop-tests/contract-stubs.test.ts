// The other direction: Node handlers declare their arguments at register,
// `contract export` writes them, `contract ruby-stubs` makes Ruby classes of
// them, and real Ruby pushes through those stubs into a real Node worker.
// Then the drift: `contract check` and `migrate audit` against the Ruby
// app's contract (test/contract/fixtures/shop.contract.json).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it, onTestFinished } from "vitest";
import { auditQueues, collectHandlers } from "../src/assembly/migration.js";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";
import { cli } from "./support/contract.js";

const FIXTURES = join(import.meta.dirname, "../test/contract/fixtures");
const HANDLERS = join(FIXTURES, "node-handlers.mjs");
const SHOP = join(FIXTURES, "shop.contract.json");

describeEachSidekiq("contract: Ruby stubs for Node handlers, and drift", (sk) => {
  it("export and ruby-stubs; Ruby's stubs check the arity and push into a real Node worker", async () => {
    const dir = mkdtempSync(join(tmpdir(), "contract-stubs-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const exported = await cli([
      "contract",
      "export",
      "-r",
      HANDLERS,
      "--app",
      "node",
      "--out",
      join(dir, "node.json"),
    ]);
    expect(exported.output).toContain("wrote");
    expect(exported.output).toContain("4 handlers, 1 without an argument schema");
    const stubbed = await cli(["contract", "ruby-stubs", join(dir, "node.json"), "--out", join(dir, "node_jobs.rb")]);
    expect(stubbed.code, stubbed.output).toBe(0);

    const ruby = await sk.ruby<{ errors: string[]; queued: unknown[] }>(
      `eval(ENV.fetch("STUBS"))
       errors = []
       NodeJobs::Greeter.perform_async("ann")
       NodeJobs::Greeter.set(retry: 7).perform_async("bob", "hi")
       NodeJobs::Billing::Charge.perform_async(5, "a", "b")
       NodeJobs::Greeter.perform_in(3600, "later")
       [[], ["a", "b", "c"]].each do |args|
         NodeJobs::Greeter.perform_async(*args)
       rescue ArgumentError => e
         errors << e.message
       end
       queued = %w[node-greet node-bill].flat_map { |q| Sidekiq::Queue.new(q).map { |j| [j.queue, j.klass, j.args, j["retry"], j["backtrace"]] } }
       {"errors" => errors, "queued" => queued.sort_by(&:to_s), "scheduled" => Sidekiq::ScheduledSet.new.map { |j| [j.klass, j.args] }}`,
      { STUBS: readFileSync(join(dir, "node_jobs.rb"), "utf8") },
    );
    expect(ruby.errors).toEqual([
      "wrong number of arguments (given 0, expected 1..2) for the Node job Greeter",
      "wrong number of arguments (given 3, expected 1..2) for the Node job Greeter",
    ]);
    expect(ruby.queued).toEqual([
      ["node-bill", "Billing::Charge", [5, "a", "b"], true, 5],
      ["node-greet", "Greeter", ["ann"], 2, null],
      ["node-greet", "Greeter", ["bob", "hi"], 7, null],
    ]);
    expect(ruby).toMatchObject({ scheduled: [["Greeter", ["later"]]] });

    const mod = (await import(HANDLERS)) as { default: (w: Worker) => void; received: unknown[] };
    const w = new Worker({
      redis: sk.url,
      dialect: sk.target.version,
      queues: ["node-greet", "node-bill"],
      concurrency: 3,
      timeout: 3,
    });
    mod.received.length = 0; // the module is shared by the releases' blocks
    mod.default(w);
    await w.start();
    try {
      await waitFor("the Node worker to run the three jobs", async () => mod.received.length >= 3 || undefined, 20_000);
    } finally {
      await w.stop();
    }
    expect([...mod.received].sort()).toEqual([
      ["Billing::Charge", [5, "a", "b"]],
      ["Greeter", ["ann"]],
      ["Greeter", ["bob", "hi"]],
    ]);
  });

  it("contract check and migrate audit: a handler that differs from its Ruby class blocks its queue, an undeclared one is unchecked", async () => {
    const checked = await cli(["contract", "check", "--committed", SHOP, "--current", SHOP, "-r", HANDLERS]);
    expect(checked.code).toBe(1);
    expect(checked.output).toContain(`${SHOP} matches the app`);
    expect(checked.output).toContain(
      "WelcomeEmailJob: Ruby's perform takes 2 arguments (user_id, template); the Node handler takes 1 argument (user_id)",
    );
    expect(checked.output).toContain("unchecked (no argument schema): LegacyWorker");

    await sk.ruby(
      `dir = File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "..", "contract")
       require File.join(dir, "jobs.rb")
       WelcomeEmailJob.perform_async(1, "welcome")
       LegacyWorker.perform_async({"k" => 1})
       nil`,
    );
    const report = await auditQueues(sk.redis, {
      queues: ["mailers", "legacy"],
      handlers: await collectHandlers(await import(HANDLERS)),
    });
    const byQueue = Object.fromEntries(report.queues.map((q) => [q.queue, q]));
    expect(byQueue.mailers!.verdict).toBe("BLOCKED");
    expect(byQueue.mailers!.reasons).toContain(
      "WelcomeEmailJob: the Node handler differs from the Ruby class: Ruby's perform takes 2 arguments (user_id, template); the Node handler takes 1 argument (user_id)",
    );
    expect(byQueue.legacy!.verdict).toBe("READY");
    expect(byQueue.legacy!.warnings).toContain(
      "LegacyWorker: unchecked, its Node handler declares no argument schema (register's contract.args)",
    );
  });
});
