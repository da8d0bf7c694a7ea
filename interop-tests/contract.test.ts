// The contract against real Ruby: `contract pull` reads the fixtures of
// ruby-fixtures/contract/ on each release, and a Node client checked by that
// contract refuses exactly the calls Ruby's own perform rejects with
// ArgumentError (the oracle: every case is performed in Ruby, Sidekiq jobs as
// the processor calls them, ActiveJob jobs through ActiveJob::Base.execute).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ActiveJobDefinition, aj } from "../src/core/client/activejob.js";
import type { Client as DefinitionClient } from "../src/core/client/client-types.js";
import { Client } from "../src/core/client/client.js";
import type { RubyJsonValue } from "../src/core/wire/ruby-json.js";
import { ContractChecker, ContractError } from "../src/core/contract/checker.js";
import { readContractFile, type JobContract } from "../src/tools/contract/document.js";
import { describeEachSidekiq } from "./support/harness.js";
import { cli, CONTRACT_FILES, rubyCommand } from "./support/contract.js";

const committed = readContractFile(join(import.meta.dirname, "../test/contract/fixtures/shop.contract.json"));

/** Argument values a case draws from: a Hash last is the Ruby 3 keyword question. */
const VALUES: unknown[][] = [[], [1], [1, "a"], [1, 2, "csv"], [1, 2, 3, 4], [1, { mode: "x" }], [{ mode: "x" }]];
const KWARGS: Array<Record<string, unknown> | undefined> = [
  undefined,
  { notify: true },
  { notify: true, source: "api", extra_n: 1 },
  { name: "n" },
  { name: "n", count: 2 },
  { bogus: 1 },
];

interface Case {
  class: string;
  /** Sidekiq: the job's args. */
  args?: unknown[];
  /** ActiveJob: the serialized job (args[0] of the wrapper). */
  body?: Record<string, unknown>;
}

const noClient = {} as DefinitionClient;

function cases(contract: JobContract): Case[] {
  const out: Case[] = [];
  for (const [name, def] of Object.entries(contract.classes)) {
    if (def.unchecked !== undefined) continue; // pushed unchecked by design
    if (def.kind === "sidekiq") for (const args of VALUES) out.push({ class: name, args });
    else
      for (const args of VALUES.slice(0, 4))
        for (const kw of KWARGS) {
          const all = kw ? [...args, aj.kwargs(kw)] : args;
          const body = new ActiveJobDefinition(noClient, name).serialize(
            all,
            "7.1",
            "00000000-0000-4000-8000-000000000000",
          );
          out.push({ class: name, body });
        }
  }
  return out;
}

describeEachSidekiq("contract: pulled from real Ruby, checked like Ruby's perform", (sk) => {
  let pulled: JobContract;
  let pullRun: Awaited<ReturnType<typeof cli>>;
  let dir: string | undefined;
  afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "contract-"));
    const out = join(dir, "shop.contract.json");
    pullRun = await cli([
      "contract",
      "pull",
      "--app",
      "shop",
      "--out",
      out,
      "--ruby",
      rubyCommand(sk.target),
      "--sig",
      "contract/sig",
      ...CONTRACT_FILES,
    ]);
    expect(pullRun.stderr, pullRun.output).not.toContain("sidekiq-bridge contract");
    pulled = readContractFile(out);
  }, 60_000);

  it("pull lists every class with its parameters, options and RBS types; bad classes are one line each and unchecked", () => {
    expect(pullRun.code).toBe(0);
    expect(pullRun.output).toContain("19 classes of shop, 2 unchecked");
    expect(pullRun.stderr).toMatch(/BrokenLoadJob: failed to load contract\/bad\/broken_load_job\.rb: NameError/);
    expect(pullRun.stderr).toMatch(/GhostJob: perform is answered by method_missing/);
    // A default JSON cannot carry is Ruby's business: the class stays checked, the default's source recorded.
    expect(pullRun.stderr).not.toContain("SymbolDefaultJob");
    expect(pulled.classes.SymbolDefaultJob).toMatchObject({
      params: [{ name: "id" }, { name: "speed", default: ":fast" }],
    });
    expect(pulled.source).toMatchObject({ sidekiq: sk.target.version, types: "rbs" });
    const wrapper =
      sk.target.dialect === 8 ? "Sidekiq::ActiveJob::Wrapper" : "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper";
    expect(Object.keys(pulled.classes)).toEqual(Object.keys(committed.classes));
    for (const [name, def] of Object.entries(committed.classes)) {
      const got = pulled.classes[name]!;
      expect({ name, kind: got.kind, params: got.params, unchecked: got.unchecked }).toEqual({
        name,
        kind: def.kind,
        params: def.params,
        unchecked: def.unchecked,
      });
      if (def.kind === "sidekiq") expect(got.options, name).toEqual(def.options);
      else expect(got.activejob, name).toEqual({ ...def.activejob, wrapper });
    }
  });

  it("a job file that aborts while loading, or whose error names a path, is one unchecked class; the pull goes on", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "contract-odd-")), "odd.contract.json");
    const run = await cli([
      "contract",
      "pull",
      "--app",
      "odd",
      "--out",
      out,
      "--ruby",
      rubyCommand(sk.target),
      "contract/jobs.rb",
      "contract/odd/exiting_job.rb",
      "contract/odd/missing_helper_job.rb",
    ]);
    expect(run.code, run.output).toBe(0);
    const odd = readContractFile(out);
    expect(odd.classes.ExitingJob?.unchecked).toBe(
      "failed to load contract/odd/exiting_job.rb: SystemExit: ExitingJob needs SHOP_API_KEY",
    );
    // Relative to the app, as Ruby's own message is not: another checkout of the app pulls the same contract.
    expect(odd.classes.MissingHelperJob?.unchecked).toBe(
      "failed to load contract/odd/missing_helper_job.rb: LoadError: cannot load such file -- contract/odd/missing_helper",
    );
    // The classes after them were read.
    expect(Object.values(odd.classes).filter((c) => c.unchecked === undefined).length).toBeGreaterThan(5);
  }, 60_000);

  it("contract check --ruby pulls again and compares with the committed contract", async () => {
    const run = await cli([
      "contract",
      "check",
      "--committed",
      join(import.meta.dirname, "../test/contract/fixtures/shop.contract.json"),
      "--ruby",
      rubyCommand(sk.target),
      "--sig",
      "contract/sig",
      ...CONTRACT_FILES,
    ]);
    // The committed contract was pulled on 8.1.7; older releases' ActiveJob adapter has another wrapper.
    if (sk.target.dialect === 8) {
      expect(run.output).toContain("shop.contract.json matches the app");
      expect(run.code).toBe(0);
    } else {
      expect(run.output).toMatch(
        /SignupJob: ActiveJob settings were .*"wrapper":"Sidekiq::ActiveJob::Wrapper".*now .*"wrapper":"ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper"/,
      );
      expect(run.code).toBe(1);
    }
  });

  it("Node refuses exactly the calls Ruby's perform rejects with ArgumentError", async () => {
    const all = cases(pulled);
    const checker = new ContractChecker({ contracts: pulled, mode: "error" }, () => {});
    const node = all.map((c) => {
      try {
        if (c.body) checker.checkPush({ class: "Wrapper", wrapped: c.class, args: [c.body] });
        else checker.checkPush({ class: c.class, args: c.args! });
        return "ok";
      } catch (e) {
        if (!(e instanceof ContractError)) throw e;
        return `refused: ${e.message}`;
      }
    });
    const ruby = await sk.ruby<string[]>(
      `dir = File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "..", "contract")
       require File.join(dir, "jobs.rb")
       require File.join(dir, "activejob.rb")
       require File.join(dir, "symbol_default_job.rb")
       JSON.parse(ENV.fetch("CASES")).map do |c|
         begin
           if c["body"] then ActiveJob::Base.execute(c["body"])
           else Object.const_get(c["class"]).new.perform(*Sidekiq.load_json(JSON.generate(c["args"])))
           end
           "ok"
         rescue ArgumentError => e
           "ArgumentError: #{e.message}"
         end
       end`,
      { CASES: JSON.stringify(all) },
    );
    const mismatches = all.flatMap((c, i) =>
      ruby[i]!.startsWith("ArgumentError") === node[i]!.startsWith("refused")
        ? []
        : [`${c.class} ${JSON.stringify(c.args ?? c.body!.arguments)}: Ruby ${ruby[i]}; Node ${node[i]}`],
    );
    expect(mismatches).toEqual([]);
    // The cases reach both answers, for Sidekiq and ActiveJob classes alike.
    const refused = node.filter((v) => v !== "ok").length;
    expect(refused).toBeGreaterThan(40);
    expect(all.length - refused).toBeGreaterThan(40);
    expect(ruby.filter((v, i) => v !== "ok" && all[i]!.body !== undefined).length).toBeGreaterThan(10);
  });

  it("with the contract's options, a Node push lands on the queue, with the retry and options, perform_async gives", async () => {
    const calls: Array<[string, unknown[]]> = [
      ["WelcomeEmailJob", [1, "welcome"]],
      ["OptionalArgsJob", [2]],
      ["SplatJob", ["a", 1, 2]],
      ["BlockJob", [3]],
      ["NoArgsJob", []],
      ["LockedJob", [4]],
      ["LegacyWorker", [{ k: 1 }]],
      ["Billing::InvoiceJob", [5, 9.5]],
    ];
    const payloads = async () => {
      const out: Record<string, unknown>[] = [];
      for (const key of (await sk.redis.keys("queue:*")).sort()) {
        for (const raw of await sk.redis.lrange(key, 0, -1)) {
          const { jid, created_at, enqueued_at, ...rest } = JSON.parse(raw) as Record<string, unknown>;
          void [jid, created_at, enqueued_at];
          out.push(rest);
        }
        await sk.redis.del(key);
      }
      return out.sort((a, b) => String(a.class).localeCompare(String(b.class)));
    };
    await sk.redis.del(...(await sk.redis.keys("queue:*")), "queues");
    await sk.ruby(
      `dir = File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "..", "contract")
       require File.join(dir, "jobs.rb")
       JSON.parse(ENV.fetch("CALLS")).each { |(k, a)| Object.const_get(k).perform_async(*a) }
       nil`,
      { CALLS: JSON.stringify(calls) },
    );
    const ruby = await payloads();
    const client = new Client({
      redis: sk.url,
      dialect: sk.target.version,
      contract: { contracts: pulled, mode: "error" },
    });
    try {
      for (const [k, a] of calls) await client.job(k).performAsync(...(a as RubyJsonValue[]));
    } finally {
      await client.close();
    }
    expect(await payloads()).toEqual(ruby);
    expect(ruby.find((p) => p.class === "WelcomeEmailJob")).toMatchObject({ queue: "mailers", retry: 5 });
  });

  it("a refused push reaches no Redis; an accepted one lands on the class's queue; strict refuses RBS types", async () => {
    const warnings: string[] = [];
    const client = new Client({
      redis: sk.url,
      dialect: sk.target.version,
      contract: { contracts: pulled, mode: "error" },
      warn: (m) => warnings.push(m),
    });
    try {
      const welcome = client.job("WelcomeEmailJob", { queue: "mailers", retry: 5 });
      await expect(welcome.performAsync(42 as never)).rejects.toThrow(
        /WelcomeEmailJob#perform takes 2 arguments \(user_id, template\), given 1: \[42\]; missing template/,
      );
      await expect(client.job("WelcomeEmailJobs").performAsync(1)).rejects.toThrow(ContractError);
      expect(await sk.redis.llen("queue:mailers")).toBe(0);
      // "error" lets a type mismatch through (Ruby runs it); "strict" does not.
      await welcome.performAsync("42", "welcome");
      expect(warnings).toEqual(['contract: WelcomeEmailJob#perform user_id must be Integer, given "42"']);
      expect(await sk.ruby(`Sidekiq::Queue.new("mailers").map { |j| [j.klass, j.args, j["retry"]] }`)).toEqual([
        ["WelcomeEmailJob", ["42", "welcome"], 5],
      ]);
      const strict = new Client({
        redis: sk.url,
        dialect: sk.target.version,
        contract: { contracts: pulled, mode: "strict" },
      });
      await expect(strict.job("WelcomeEmailJob").performAsync("42", "welcome")).rejects.toThrow(
        /user_id must be Integer, given "42"/,
      );
      // The escape hatches: per call and per class.
      await strict.unchecked.job("WelcomeEmailJob", { queue: "mailers" }).performAsync("43", "x");
      const perClass = new Client({
        redis: sk.url,
        dialect: sk.target.version,
        contract: { contracts: pulled, mode: "error", unchecked: ["OtherAppJob"] },
      });
      await perClass.job("OtherAppJob", { queue: "other" }).performAsync(1, 2, 3);
      expect(await sk.redis.llen("queue:mailers")).toBe(2);
      expect(await sk.redis.llen("queue:other")).toBe(1);
      await Promise.all([strict.close(), perClass.close()]);
    } finally {
      await client.close();
    }
  });
});
