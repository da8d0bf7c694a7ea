// Node -> Rails: mail sent from Node through a real Rails 7.2 app (ruby-fixtures/rails-app)
// on Sidekiq 8. The payload equals the one Rails' own deliver_later writes, byte
// for byte but for the per-run fields, and Rails delivers the same mail it renders.
import { beforeAll, expect, it } from "vitest";
import { aj } from "../src/core/client/activejob.js";
import { Client } from "../src/core/client/client.js";
import { ContractError } from "../src/core/contract/checker.js";
import { generateTypes, loadSchemaCompiler } from "../src/tools/contract/gen.js";
import { pullContract } from "../src/tools/contract/pull.js";
import { checkBlocks, type Block } from "../test/docs/snippets.js";
import { rubyCommand } from "./support/contract.js";
import { describeEachSidekiq } from "./support/harness.js";
import { RAILS_APP, railsApp, stableMail, stablePayload, ZONED } from "./support/rails-app.js";

interface Seed {
  app: string;
  odd: [string, string];
  account: { id: number; gid: string };
  user: { id: number; gid: string; email: string };
  rendered: { welcome: string; receipt: string };
}

describeEachSidekiq(
  "Rails app: ActionMailer from Node",
  (sk) => {
    const rails = railsApp(sk);
    let seed: Seed;
    let client: Client;

    beforeAll(async () => {
      // One boot: records, Rails' own deliver_later onto a queue no worker reads, and the mails Rails renders.
      seed = await rails.eval<Seed>(`
        account = Account.create!(name: "Acme")
        user = account.users.create!(email: "ada@acme.test", name: "Ada")
        UserMailer.with(account: account).welcome(user).deliver_later(queue: "held")
        UserMailer.receipt(user, BigDecimal("9.5"), note: "thanks").deliver_later(queue: "held", wait_until: Time.utc(2030, 1, 2, 3, 4, 5))
        {app: GlobalID.app,
         odd: [URI::GID.build(app: GlobalID.app, model_name: "User", model_id: "a b/é!*~").to_s,
               URI::GID.build(app: GlobalID.app, model_name: "User", model_id: [1, "x y"]).to_s],
         account: {id: account.id, gid: account.to_global_id.to_s},
         user: {id: user.id, gid: user.to_global_id.to_s, email: user.email},
         rendered: {welcome: UserMailer.with(account: account).welcome(user).message.encoded,
                    receipt: UserMailer.receipt(user, BigDecimal("9.5"), note: "thanks").message.encoded}}
      `);
      client = new Client({ redis: sk.url, dialect: sk.target.version });
      return () => client.close();
    });

    it("names records as the app's GlobalID does", () => {
      expect(seed.app).toBe(RAILS_APP);
      expect(aj.record(RAILS_APP, "User", seed.user.id).json).toEqual({ _aj_globalid: seed.user.gid });
      expect(aj.record(RAILS_APP, "Account", seed.account.id).json).toEqual({ _aj_globalid: seed.account.gid });
      // Ids escaped as GlobalID escapes them (CGI.escape), composite ids joined by "/".
      expect(aj.record(RAILS_APP, "User", "a b/é!*~").json).toEqual({ _aj_globalid: seed.odd[0] });
      expect(aj.record(RAILS_APP, "User", [1, "x y"]).json).toEqual({ _aj_globalid: seed.odd[1] });
    });

    it("writes what deliver_later writes, parameterized and plain, immediate and scheduled", async () => {
      const users = client.mailer("UserMailer");
      const user = aj.record(RAILS_APP, "User", seed.user.id);
      const account = aj.record(RAILS_APP, "Account", seed.account.id);
      const rubyWelcome = (await sk.redis.lrange("queue:held", 0, -1))[0]!;
      const rubyReceipt = (await sk.redis.zrange("schedule", 0, -1))[0]!;
      await users.deliverLater("welcome", [user], { params: { account }, queue: "held" });
      await users.deliverLater("receipt", [user, aj.bigDecimal("9.5"), aj.kwargs({ note: "thanks" })], {
        queue: "held",
        waitUntil: new Date(Date.UTC(2030, 0, 2, 3, 4, 5)),
      });
      const nodeWelcome = (await sk.redis.lrange("queue:held", 0, -1)).find((s) => s !== rubyWelcome)!;
      const nodeReceipt = (await sk.redis.zrange("schedule", 0, -1)).find((s) => s !== rubyReceipt)!;
      expect(stablePayload(nodeWelcome)).toBe(stablePayload(rubyWelcome));
      expect(stablePayload(nodeReceipt)).toBe(stablePayload(rubyReceipt));
      expect(nodeWelcome).toContain('"arguments":["UserMailer","welcome","deliver_now",{"params":');
    });

    it("is delivered by Rails as the mail Rails renders for the same call", async () => {
      await rails.start(["default"]);
      const users = client.mailer("UserMailer");
      const user = aj.record(RAILS_APP, "User", seed.user.id);
      await users.deliverLater("welcome", [user], {
        params: { account: aj.record(RAILS_APP, "Account", seed.account.id) },
      });
      const welcome = await rails.delivered(seed.user.email);
      expect(stableMail(welcome)).toBe(stableMail(seed.rendered.welcome));
      expect(welcome).toContain("Hello Ada, welcome to Acme (1 users).");
    });

    it("contract pull boots the app and lists its jobs and mailer actions; a wrong mailer call is refused", async () => {
      // Booted with a zone and locale of its own, which the contract carries to Node's pushes.
      const ruby = rubyCommand(
        sk.target,
        { ...rails.env(), ...ZONED },
        { dir: "rails-app", rubyArgs: ["-r", "./config/environment"] },
      );
      const { contract } = await pullContract({ ruby });
      expect(contract.app).toBe(RAILS_APP);
      expect(contract.activejob_defaults).toEqual({ locale: "de", timezone: "Berlin" });
      const c = contract.classes;
      expect(c["UserMailer#welcome"]).toMatchObject({ kind: "mailer", params: [{ name: "user", kind: "req" }] });
      expect(c["UserMailer#receipt"]!.params!.map((p) => `${p.kind} ${p.name}`)).toEqual([
        "req user",
        "req amount",
        "key note",
      ]);
      expect(c.NotifyJob).toMatchObject({ kind: "activejob", activejob: { queue: null, dynamic_queue: true } });
      expect(c.ReindexJob).toMatchObject({ kind: "activejob", activejob: { queue: "default" } });
      expect(c.AuditWorker).toMatchObject({ kind: "sidekiq", options: { queue: "audit", retry: 2 } });
      // Defaults JSON cannot carry (BigDecimal, Symbol, Date, a constant) leave the class checked, their source recorded.
      expect(c.InvoiceJob!.unchecked).toBeUndefined();
      expect(c.InvoiceJob!.params!.map((p) => `${p.kind} ${p.name}${p.default ? ` = ${p.default}` : ""}`)).toEqual([
        "req account",
        "req amount",
        'opt rate = BigDecimal("0.20")',
        "keyreq period",
        "keyreq window",
        "key kind = :regular",
        "key due = Date.new(2026, 1, 31)",
        "key grace = GRACE_DAYS",
      ]);
      // The app's GlobalID app is its own, not the module's name the contract is namespaced by.
      expect(contract.globalid_app).toBe(ZONED.BRIDGE_RAILS_GLOBALID_APP);
      const checked = new Client({
        redis: sk.url,
        dialect: sk.target.version,
        contract: { contracts: contract, mode: "error" },
      });
      try {
        // Records of the app the contract names: its own GlobalID app, never typed by hand.
        const user = checked.record("User", seed.user.id);
        expect(user.json).toEqual({ _aj_globalid: `gid://shop-records/User/${seed.user.id}` });
        const users = checked.mailer("UserMailer");
        await expect(users.deliverLater("welcome", [user], { queue: "held" })).resolves.toMatchObject({
          jid: expect.any(String),
        });
        await expect(users.deliverLater("welcom", [user], { queue: "held" })).rejects.toThrow(ContractError);
        await expect(users.deliverLater("receipt", [user], { queue: "held" })).rejects.toThrow(/missing amount/);
        const invoices = checked.activeJob("InvoiceJob").set({ queue: "held" });
        const account = checked.record("Account", seed.account.id);
        await expect(invoices.performLater(account, aj.bigDecimal("10"))).rejects.toThrow(
          /missing keywords period:, window:/,
        );
        await expect(
          invoices.performLater(account, aj.bigDecimal("10"), aj.kwargs({ period: 1, window: 2, knd: aj.symbol("x") })),
        ).rejects.toThrow(/unknown keyword knd:/);

        // What Rails writes in that app, and what the checked client writes: the same bytes.
        const ruby = await rails.eval<{ post: number; mail: string; reindex: string; invoice: string }>(
          `
          post = Account.first.posts.create!(title: "Zoned")
          UserMailer.with(account: Account.first).welcome(User.first).deliver_later(queue: "zoned")
          ReindexJob.set(queue: "zoned").perform_later(post, force: true)
          InvoiceJob.set(queue: "zoned").perform_later(Account.first, BigDecimal("12.50"), period: Date.new(2026, 1, 1)...Date.new(2026, 2, 1), window: 2.hours, kind: :rush)
          mail, reindex, invoice = Sidekiq.redis { |r| r.lrange("queue:zoned", 0, -1) }.reverse
          {post: post.id, mail: mail, reindex: reindex, invoice: invoice}
        `,
          ZONED,
        );
        await users.deliverLater("welcome", [user], { params: { account }, queue: "zoned" });
        await checked
          .activeJob("ReindexJob")
          .set({ queue: "zoned" })
          .performLater(checked.record("Post", ruby.post), aj.kwargs({ force: true }));
        await checked
          .activeJob("InvoiceJob")
          .set({ queue: "zoned" })
          .performLater(
            account,
            aj.bigDecimal("12.50"),
            aj.kwargs({
              period: aj.range(aj.date("2026-01-01"), aj.date("2026-02-01"), true),
              window: aj.duration({ hours: 2 }),
              kind: aj.symbol("rush"),
            }),
          );
        const [nodeMail, nodeReindex, nodeInvoice] = (await sk.redis.lrange("queue:zoned", 0, 2)).reverse();
        expect(stablePayload(nodeMail!)).toBe(stablePayload(ruby.mail));
        expect(stablePayload(nodeReindex!)).toBe(stablePayload(ruby.reindex));
        expect(stablePayload(nodeInvoice!)).toBe(stablePayload(ruby.invoice));
        expect(ruby.mail).toContain('"locale":"de","timezone":"Berlin"');
        expect(ruby.invoice).toContain('{"_aj_globalid":"gid://shop-records/Account/');
      } finally {
        await checked.close();
      }

      // The types contract gen makes of the pulled contract: right calls compile, wrong ones do not.
      const generated = await generateTypes([contract], await loadSchemaCompiler());
      const usage = `import { Client, aj } from "sidekiq-bridge";
declare const client: Client;
const user = aj.record("shop", "User", 1);
client.mailer("UserMailer").deliverLater("welcome", [user], { params: { account: aj.record("shop", "Account", 1) } });
client.mailer("UserMailer").deliverLater("receipt", [user, aj.bigDecimal("9.5"), aj.kwargs({ note: "thanks" })]);
client.activeJob("ReindexJob").performLater(client.record("Post", 1), aj.kwargs({ force: true }));
const invoice = client.activeJob("InvoiceJob");
invoice.performLater(client.record("Account", 1), aj.bigDecimal("10"), aj.kwargs({ period: 1, window: 2 }));
invoice.performLater(client.record("Account", 1), aj.bigDecimal("10"), aj.bigDecimal("0.1"), aj.kwargs({ period: 1, window: 2, kind: aj.symbol("rush") }));
client.record("User", 1, { app: "shop" });
// @ts-expect-error period: and window: are required
invoice.performLater(client.record("Account", 1), aj.bigDecimal("10"));
// @ts-expect-error the account and the amount come first
invoice.performLater(aj.kwargs({ period: 1, window: 2 }));
// @ts-expect-error the contract of no such app records a GlobalID app
client.record("User", 1, { app: "shops" });
// @ts-expect-error UserMailer has no action welcom
client.mailer("UserMailer").deliverLater("welcom", [user]);
// @ts-expect-error receipt takes the user and the amount
client.mailer("UserMailer").deliverLater("receipt", [user]);
// @ts-expect-error the app has no such mailer
client.mailer("UserMailers");
// @ts-expect-error perform takes the post
client.activeJob("ReindexJob").performLater();
`;
      const block = (file: string, code: string): Block => ({ file, line: 1, lang: "ts", attrs: new Map(), code });
      const [gen, use] = checkBlocks([block("shop-jobs.ts", generated), block("usage.ts", usage)]);
      expect(gen!.problems).toEqual([]);
      expect(use!.problems).toEqual([]);
    });
  },
  (t) => t.suite === "forky",
);
