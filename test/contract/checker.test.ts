import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { aj, ActiveJobDefinition } from "../../src/core/client/activejob.js";
import { MailerDefinition } from "../../src/core/client/mailer.js";
import type { Client as ClientLike } from "../../src/core/client/client-types.js";
import { Client } from "../../src/core/client/client.js";
import { ContractChecker, ContractError, type ContractOptions } from "../../src/core/contract/checker.js";
import { readContractFile, type JobContract } from "../../src/tools/contract/document.js";
import { RubyFloat } from "../../src/core/wire/ruby-json.js";

const shop = readContractFile(join(import.meta.dirname, "fixtures/shop.contract.json"));

function checker(opts: Partial<ContractOptions> = {}, warnings: string[] = []) {
  return new ContractChecker({ contracts: shop, ...opts }, (m) => warnings.push(m));
}

function refusal(fn: () => void): string | undefined {
  try {
    fn();
    return undefined;
  } catch (e) {
    if (e instanceof ContractError) return e.message;
    throw e;
  }
}

const ajPush = (cls: string, args: unknown[]) => ({
  class: "Sidekiq::ActiveJob::Wrapper",
  wrapped: cls,
  args: [new ActiveJobDefinition({} as ClientLike, cls).serialize(args)],
});

describe("contract checker", () => {
  it("error mode: names the class, the parameter and what was given", () => {
    const c = checker({ mode: "error" });
    expect(refusal(() => c.check("WelcomeEmailJob", [42]))).toBe(
      "WelcomeEmailJob#perform takes 2 arguments (user_id, template), given 1: [42]; missing template",
    );
    expect(refusal(() => c.check("OptionalArgsJob", [1, 2, 3, 4]))).toBe(
      "OptionalArgsJob#perform takes 1 to 3 arguments (report_id, page?, format?), given 4: [1,2,3,4]; 1 too many",
    );
    expect(refusal(() => c.check("RequiredKeywordJob", [1, { mode: "x" }]))).toBe(
      "RequiredKeywordJob#perform requires keyword mode:, which Sidekiq never passes (a JSON Hash arrives as a positional argument): every push of it raises ArgumentError",
    );
    expect(refusal(() => c.check("WelcomeEmailJobs", [1]))).toMatch(
      /^WelcomeEmailJobs is not a job class of the contract of shop: Ruby would raise NameError/,
    );
    expect(refusal(() => c.check("SplatJob", ["a"]))).toBeUndefined();
    expect(refusal(() => c.check("PostArgJob", [1, 2]))).toBeUndefined();
    expect(refusal(() => c.check("PostArgJob", [1]))).toMatch(/missing last$/);
  });

  it("ActiveJob keywords: required, unknown, and a Hash to a method without keywords", () => {
    const c = checker({ mode: "error" });
    expect(refusal(() => c.checkPush(ajPush("SignupJob", [1])))).toBe("SignupJob#perform missing keyword notify:");
    expect(refusal(() => c.checkPush(ajPush("SignupJob", [1, aj.kwargs({ notify: true, any: 1 })])))).toBeUndefined();
    expect(refusal(() => c.checkPush(ajPush("KeywordsOnlyJob", [aj.kwargs({ name: "n", bogus: 1 })])))).toBe(
      "KeywordsOnlyJob#perform unknown keyword bogus: (accepts name:, count:)",
    );
    // Keywords to a method without any become its last positional Hash.
    expect(refusal(() => c.checkPush(ajPush("AjSplatJob", [aj.kwargs({ x: 1 })])))).toBeUndefined();
  });

  it("mailers: deliverLater's action and arguments against the contract's Mailer#action", () => {
    const withMailer: JobContract = {
      ...shop,
      classes: {
        ...shop.classes,
        "UserMailer#receipt": {
          kind: "mailer",
          params: [
            { name: "user", kind: "req" },
            { name: "amount", kind: "req" },
            { name: "note", kind: "key", default: "nil" },
          ],
          types: "none",
        },
      },
    };
    const c = new ContractChecker({ contracts: withMailer, mode: "error" }, () => {});
    const mail = (action: string, args: unknown[]) =>
      ajPush(
        "ActionMailer::MailDeliveryJob",
        new MailerDefinition({} as ClientLike, "UserMailer").arguments(action, args),
      );
    const user = aj.record("shop", "User", 1);
    expect(refusal(() => c.checkPush(mail("receipt", [user, "9.5", aj.kwargs({ note: "x" })])))).toBeUndefined();
    expect(refusal(() => c.checkPush(mail("receipt", [user])))).toBe(
      'UserMailer#receipt takes 2 arguments (user, amount), given 1: [{"_aj_globalid":"gid://shop/User/1"}]; missing amount',
    );
    expect(refusal(() => c.checkPush(mail("receipt", [user, 1, aj.kwargs({ bogus: 1 })])))).toBe(
      "UserMailer#receipt unknown keyword bogus: (accepts note:)",
    );
    expect(refusal(() => c.checkPush(mail("welcome", [user])))).toMatch(
      /^UserMailer#welcome is not a mailer action of the contract of shop: Ruby would raise NoMethodError/,
    );
  });

  it("the app's locale and time zone go into its ActiveJob and mailer payloads, whatever options a call gives", async () => {
    const rails: JobContract = {
      ...shop,
      activejob_defaults: { locale: "de", timezone: "Berlin" },
      classes: { ...shop.classes, "UserMailer#welcome": { kind: "mailer", params: [], types: "none" } },
    };
    const client = new Client({ redis: "redis://127.0.0.1:1", dialect: 8, contract: { contracts: rails } });
    try {
      const payload = (d: ActiveJobDefinition) => d.serialize([]);
      const job = (m: MailerDefinition) => (m as unknown as { job: ActiveJobDefinition }).job;
      expect(payload(client.activeJob("SignupJob"))).toMatchObject({
        locale: "de",
        timezone: "Berlin",
        queue_name: "signups",
      });
      // Options replace the class's queue_as, not the app's settings; a call may still name its own.
      expect(payload(client.activeJob("SignupJob", { priority: 5 }))).toMatchObject({
        locale: "de",
        timezone: "Berlin",
        queue_name: "default",
      });
      expect(payload(client.activeJob("SignupJob", { timezone: "UTC" }))).toMatchObject({
        locale: "de",
        timezone: "UTC",
      });
      expect(payload(job(client.mailer("UserMailer")))).toMatchObject({ locale: "de", timezone: "Berlin" });
      // Not in the contract: ActiveJob's own defaults, and Rails' "UTC" for a mailer.
      expect(payload(client.activeJob("OtherAppJob"))).toMatchObject({ locale: "en", timezone: null });
      expect(payload(job(client.mailer("OtherMailer")))).toMatchObject({ locale: "en", timezone: "UTC" });
    } finally {
      await client.close();
    }
  });

  it("client.record names records of the contract's GlobalID app, which need not be its app", async () => {
    const rails: JobContract = { ...shop, globalid_app: "shop-records" };
    const billing: JobContract = { contract: 1, app: "billing", globalid_app: "billing", classes: {} };
    const client = (contracts?: JobContract | JobContract[]) =>
      new Client({ redis: "redis://127.0.0.1:1", dialect: 8, ...(contracts ? { contract: { contracts } } : {}) });
    const one = client(rails);
    const two = client([rails, billing]);
    const none = client();
    const old = client(shop);
    try {
      expect(one.record("User", 1).json).toEqual({ _aj_globalid: "gid://shop-records/User/1" });
      expect(one.unchecked.record("User", [1, "a b"]).json).toEqual({ _aj_globalid: "gid://shop-records/User/1/a+b" });
      expect(two.record("Invoice", 7, { app: "billing" }).json).toEqual({ _aj_globalid: "gid://billing/Invoice/7" });
      expect(() => two.record("User", 1)).toThrow(
        'client.record: the contracts of shop, billing record different GlobalID apps (shop-records, billing): say which, client.record(model, id, { app: "shop" })',
      );
      expect(() => two.record("User", 1, { app: "shops" })).toThrow(
        'client.record: no contract of app "shops" (the contracts are of shop, billing)',
      );
      expect(() => none.record("User", 1)).toThrow(
        /give the Client a contract .* or name the app: aj.record\(app, model, id\)/,
      );
      expect(() => old.record("User", 1)).toThrow(/the contract of shop does not record GlobalID.app .*pull it again/);
    } finally {
      await Promise.all([one, two, none, old].map((c) => c.close()));
    }
  });

  it("an optional parameter is optional whatever its default (a Symbol, a BigDecimal, a constant)", () => {
    const c = checker({ mode: "error" });
    expect(refusal(() => c.check("SymbolDefaultJob", [1]))).toBeUndefined();
    expect(refusal(() => c.check("SymbolDefaultJob", [1, "slow"]))).toBeUndefined();
    expect(refusal(() => c.check("SymbolDefaultJob", []))).toMatch(/takes 1 to 2 arguments \(id, speed\?\), given 0/);
  });

  it("types: strict refuses, error and warn warn once per class and parameter", () => {
    const warnings: string[] = [];
    const c = checker({ mode: "error" }, warnings);
    c.check("WelcomeEmailJob", ["1", "t"]);
    c.check("WelcomeEmailJob", ["2", "t"]);
    expect(warnings).toEqual(['contract: WelcomeEmailJob#perform user_id must be Integer, given "1"']);
    const s = checker({ mode: "strict" });
    expect(refusal(() => s.check("OptionalArgsJob", [1, 2, "xls"]))).toBe(
      'OptionalArgsJob#perform format must be "pdf" | "csv", given "xls"',
    );
    expect(refusal(() => s.check("SplatJob", ["a", 1, 2n, "3"]))).toBe(
      'SplatJob#perform counts must be Integer, given "3"',
    );
    expect(refusal(() => s.check("Billing::InvoiceJob", [1, new RubyFloat(2.5), { a: null }]))).toBeUndefined();
    expect(refusal(() => s.checkPush(ajPush("SignupJob", [1, aj.kwargs({ notify: true, n: "x" })])))).toBe(
      'SignupJob#perform extra must be Integer, given "x"',
    );
  });

  it("warn mode pushes everything and says so once", () => {
    const warnings: string[] = [];
    const c = checker({}, warnings);
    c.check("NoSuchJob", []);
    c.check("NoSuchJob", []);
    c.check("NoArgsJob", [1]);
    expect(warnings).toHaveLength(2);
    expect(warnings[1]).toBe("contract: NoArgsJob#perform takes 0 arguments (), given 1: [1]; 1 too many");
  });

  it("escape hatches: unchecked classes by name, pattern or function; the contract's own unchecked classes pass", () => {
    expect(refusal(() => checker({ mode: "error", unchecked: ["Other"] }).check("Other", []))).toBeUndefined();
    expect(refusal(() => checker({ mode: "error", unchecked: [/^Other::/] }).check("Other::Job", []))).toBeUndefined();
    expect(refusal(() => checker({ mode: "error", unchecked: (n) => n === "X" }).check("X", []))).toBeUndefined();
    expect(refusal(() => checker({ mode: "error" }).check("GhostJob", [1, 2, 3]))).toBeUndefined();
  });

  it("several apps: each its namespace; the push's queue picks the app, the message names it", () => {
    const billing: JobContract = {
      contract: 1,
      app: "billing",
      classes: {
        WelcomeEmailJob: { kind: "sidekiq", params: [], options: { queue: "billing" } },
        PayJob: { kind: "sidekiq", params: [] },
      },
    };
    const c = new ContractChecker({ contracts: [shop, billing], mode: "error" }, () => {});
    expect(refusal(() => c.check("WelcomeEmailJob", [], undefined, "billing"))).toBeUndefined();
    expect(refusal(() => c.check("WelcomeEmailJob", [1, "t"], undefined, "mailers"))).toBeUndefined();
    expect(refusal(() => c.check("WelcomeEmailJob", [1], undefined, "mailers"))).toMatch(
      /^WelcomeEmailJob#perform \(shop\) takes 2/,
    );
    expect(refusal(() => c.check("PayJob", []))).toBeUndefined();
    expect(c.appsOf("WelcomeEmailJob")).toEqual(["shop", "billing"]);
    expect(refusal(() => c.check("Nope", []))).toMatch(/not a job class of the contracts of shop, billing/);
  });

  it("refuses an unknown mode", () => {
    expect(() => checker({ mode: "loud" as never })).toThrow(/contract mode must be/);
  });
});
