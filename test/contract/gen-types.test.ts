// The generated types, compiled by tsc with the package's public entry points:
// declared classes and arities compile, and every wrong call is a compile
// error (each `// @ts-expect-error` must meet one, or tsc reports it unused).
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateTypes, loadSchemaCompiler } from "../../src/tools/contract/gen.js";
import { readContractFile } from "../../src/tools/contract/document.js";
import { checkBlocks, type Block } from "../docs/snippets.js";

const pulled = readContractFile(join(import.meta.dirname, "fixtures/shop.contract.json"));
// Two mailer actions, as contract pull lists them from a Rails app ("Mailer#action").
const shop = {
  ...pulled,
  globalid_app: "shop-records",
  classes: {
    ...pulled.classes,
    "UserMailer#welcome": {
      kind: "mailer" as const,
      params: [{ name: "user", kind: "req" as const }],
      types: "none" as const,
    },
    "UserMailer#receipt": {
      kind: "mailer" as const,
      params: [
        { name: "user", kind: "req" as const },
        { name: "amount", kind: "req" as const },
        { name: "note", kind: "key" as const, default: "nil" },
      ],
      types: "none" as const,
    },
  },
};

const USAGE = `import { Client, aj } from "sidekiq-bridge";
declare const client: Client;

client.job("WelcomeEmailJob").performAsync(1, "welcome");
client.job("WelcomeEmailJob", { queue: "critical" }).performBulk([[1, "a"], [2, "b"]]);
// @ts-expect-error an unknown class
client.job("WelcomeEmailJobs");
// @ts-expect-error one argument short
client.job("WelcomeEmailJob").performAsync(1);
// @ts-expect-error one too many
client.job("WelcomeEmailJob").performAsync(1, "welcome", 3);
// @ts-expect-error user_id is an Integer in the RBS signature
client.job("WelcomeEmailJob").performAsync("1", "welcome");
client.job("OptionalArgsJob").performAsync(1);
client.job("OptionalArgsJob").performIn(60, 1, 2, "csv");
// @ts-expect-error format is "pdf" | "csv"
client.job("OptionalArgsJob").performAsync(1, 2, "xls");
client.job("SplatJob").performAsync("a", 1, 2, 3);
// @ts-expect-error counts are Integers
client.job("SplatJob").performAsync("a", 1, "2");
client.job("PostArgJob").performAsync(1, 2);
client.job("PostArgJob").performAsync(1, null, 2);
// @ts-expect-error two or three arguments
client.job("PostArgJob").performAsync(1);
client.job("NoArgsJob").performAsync();
// @ts-expect-error perform takes none
client.job("NoArgsJob").performAsync(1);
// @ts-expect-error every push of it raises ArgumentError (a required keyword)
client.job("RequiredKeywordJob");
// @ts-expect-error unchecked in the contract: no types
client.job("GhostJob");
client.job("Billing::InvoiceJob").performAsync(1, 2.5, { note: null });
client.activeJob("SignupJob").performLater(1, aj.kwargs({ notify: true }));
client.activeJob("SignupJob").performLater(1, "pro", aj.kwargs({ notify: false, source: "api", campaign: 7 }));
// @ts-expect-error notify: is required
client.activeJob("SignupJob").performLater(1, aj.kwargs({ source: "api" }));
// @ts-expect-error the keywords are required
client.activeJob("SignupJob").performLater(1);
client.activeJob("KeywordsOnlyJob").performLater(aj.kwargs({ name: "n" }));
// @ts-expect-error an unknown ActiveJob class
client.activeJob("SignupJobs");
const user = aj.record("shop", "User", 1);
client.mailer("UserMailer").deliverLater("welcome", [user], { params: { account: aj.record("shop", "Account", 1) } });
client.mailer("UserMailer").deliverLater("receipt", [user, aj.bigDecimal("9.5")]);
client.mailer("UserMailer").deliverLater("receipt", [user, aj.bigDecimal("9.5"), aj.kwargs({ note: "thanks" })], { wait: 60 });
// @ts-expect-error an unknown action
client.mailer("UserMailer").deliverLater("welcom", [user]);
// @ts-expect-error receipt takes the user and the amount
client.mailer("UserMailer").deliverLater("receipt", [user]);
// @ts-expect-error an unknown mailer
client.mailer("UserMailers");
client.job("SymbolDefaultJob").performAsync(1);
client.job("SymbolDefaultJob").performAsync(1, "slow");
// @ts-expect-error the id is required, whatever the default of speed
client.job("SymbolDefaultJob").performAsync();
client.mailer("UserMailer").deliverLater("welcome", [client.record("User", 1)]);
client.record("User", [1, "x"], { app: "shop" });
// @ts-expect-error no contract of that app
client.record("User", 1, { app: "billing" });
// The escape hatch: another app's class, any arguments.
client.unchecked.job("OtherAppJob").performAsync(1, 2, 3);
`;

const block = (file: string, code: string): Block => ({ file, line: 1, lang: "ts", attrs: new Map(), code });

describe("contract gen", () => {
  it("types client.job, client.activeJob and client.mailer: declared classes and arities compile, wrong ones are compile errors", async () => {
    const generated = await generateTypes([shop], await loadSchemaCompiler());
    const [gen, usage] = checkBlocks([block("shop-jobs.ts", generated), block("usage.ts", USAGE)]);
    expect(gen!.problems).toEqual([]);
    expect(usage!.problems).toEqual([]);
  }, 120_000);

  it("says how to install json-schema-to-typescript when it is missing", async () => {
    await expect(
      loadSchemaCompiler(() => Promise.reject(new Error("Cannot find package 'json-schema-to-typescript'"))),
    ).rejects.toThrow(/npm install --save-dev json-schema-to-typescript/);
  });
});
