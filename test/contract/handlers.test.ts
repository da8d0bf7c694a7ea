import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contractHandlers } from "../../src/tools/contract/audit-check.js";
import { readContractFile } from "../../src/tools/contract/document.js";
import { contractChanges, handlerDrift } from "../../src/tools/contract/drift.js";
import { exportContract, paramsFromArgsSchema } from "../../src/core/contract/handlers.js";
import { rubyStubs } from "../../src/tools/contract/ruby-stubs.js";
import { collectHandlers } from "../../src/assembly/migration.js";

const shop = readContractFile(join(import.meta.dirname, "fixtures/shop.contract.json"));

async function nodeContract() {
  const path: string = "./fixtures/node-handlers.mjs";
  const mod: unknown = await import(path);
  return exportContract("node", contractHandlers(await collectHandlers(mod)));
}

describe("the Node side of the contract", () => {
  it("an args schema becomes parameters: required, optional, splat, named by title", () => {
    expect(
      paramsFromArgsSchema({
        prefixItems: [{ title: "a", type: "integer" }, { type: "string" }],
        minItems: 1,
        items: { type: "string" },
      }),
    ).toEqual([
      { name: "a", kind: "req", schema: { type: "integer" } },
      { name: "arg1", kind: "opt", schema: { type: "string" } },
      { name: "args", kind: "rest", schema: { type: "string" } },
    ]);
  });

  it("export lists every handler; one without a schema is unchecked", async () => {
    const c = await nodeContract();
    expect(Object.keys(c.classes)).toEqual(["Billing::Charge", "Greeter", "LegacyWorker", "WelcomeEmailJob"]);
    expect(c.classes.Greeter).toMatchObject({
      kind: "node",
      types: "json-schema",
      options: { queue: "node-greet", retry: 2 },
    });
    expect(c.classes.LegacyWorker!.unchecked).toMatch(/declares no argument schema/);
  });

  it("drift: the handler that differs from its Ruby class, and the unchecked one", async () => {
    expect(handlerDrift([shop], await nodeContract())).toEqual({
      differ: [
        "WelcomeEmailJob: Ruby's perform takes 2 arguments (user_id, template); the Node handler takes 1 argument (user_id)",
      ],
      unchecked: ["LegacyWorker: the handler declares no argument schema (register's contract.args)"],
    });
  });

  it("contract changes name each class that moved", () => {
    const after = structuredClone(shop);
    after.classes.WelcomeEmailJob!.options = { queue: "mailers", retry: 3 };
    after.classes.NoArgsJob!.params = [{ name: "day", kind: "req" }];
    delete after.classes.LegacyWorker;
    after.activejob_defaults = { locale: "de", timezone: "Berlin" };
    after.globalid_app = "shop-records";
    expect(contractChanges(shop, after)).toEqual([
      '(app): ActiveJob\'s locale and time zone were {"locale":"en","timezone":null}, now {"locale":"de","timezone":"Berlin"}',
      '(app): GlobalID.app was null, now "shop-records"',
      "LegacyWorker: gone",
      "NoArgsJob: perform took 0 arguments (), now 1 argument (day)",
      'WelcomeEmailJob: options were {"queue":"mailers","retry":5}, now {"queue":"mailers","retry":3}',
    ]);
    expect(contractChanges(shop, shop)).toEqual([]);
    // Key order is not a change: a fresh pull is in Ruby's order, the committed file sorted.
    const reordered = structuredClone(shop);
    reordered.classes.SignupJob!.activejob = {
      wrapper: "Sidekiq::ActiveJob::Wrapper",
      priority: null,
      queue: "signups",
    };
    reordered.classes.OptionalArgsJob!.params![2]!.schema = { anyOf: [{ const: "pdf" }, { const: "csv" }] };
    expect(contractChanges(shop, reordered)).toEqual([]);
  });

  it("ruby-stubs: one class per handler under NodeJobs, with its arity and options", async () => {
    const rb = rubyStubs(await nodeContract(), "node.json");
    expect(rb).toContain('NODE_CLASS = "Billing::Charge"\n      ARITY = [1, nil].freeze');
    expect(rb).toContain('OPTIONS = {"queue" => "node-greet", "retry" => 2}.freeze');
    expect(rb).toContain("  module Billing\n    # Node handler Billing::Charge(amount, *args)\n    class Charge");
  });
});
