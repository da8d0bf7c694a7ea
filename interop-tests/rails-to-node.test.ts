// Rails -> Node: a real Rails 7.2 app's perform_later of a class Node serves,
// with a value of every serializer ActiveJob 7.2 ships (and one custom), decoded
// to the JavaScript values docs/RAILS.md lists; Node's encoders for them go
// through Rails' own ActiveJob::Arguments and come back byte for byte.
import { beforeAll, expect, it } from "vitest";
import { aj, serializeArgument } from "../src/core/client/activejob.js";
import { AjDuration, AjModule, AjRange, AjSerialized, GlobalIdRef } from "../src/core/wire/activejob-values.js";
import { parseJsonKeepingFloats } from "../src/core/wire/json-scan.js";
import { toRubyJson, type RubyJsonValue } from "../src/core/wire/ruby-json.js";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq } from "./support/harness.js";
import { RAILS_APP, railsApp } from "./support/rails-app.js";

// Node's encodings, each with the Ruby class Rails must read it as.
const encoded: Array<[RubyJsonValue, string]> = [
  [aj.symbol("sym").json, "Symbol"],
  [aj.duration(5400, { hours: 1, minutes: 30 }).json, "ActiveSupport::Duration"],
  [aj.date("2024-02-29").json, "Date"],
  [aj.time(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 123))).json, "Time"],
  [aj.dateTime(new Date(Date.UTC(2024, 0, 2, 3, 4, 5))).json, "DateTime"],
  [aj.timeWithZone(new Date(Date.UTC(2024, 6, 1, 10)), "Europe/Paris").json, "ActiveSupport::TimeWithZone"],
  [aj.timeWithZone(new Date(Date.UTC(2024, 0, 1, 10)), "America/New_York").json, "ActiveSupport::TimeWithZone"],
  [aj.timeWithZone(new Date(Date.UTC(2024, 0, 1, 10)), "Etc/UTC").json, "ActiveSupport::TimeWithZone"],
  [aj.bigDecimal("1.5").json, "BigDecimal"],
  [aj.range(1, 5).json, "Range"],
  [aj.range(1.5, 2.5, true).json, "Range"],
  [aj.range(aj.date("2024-01-01"), null).json, "Range"],
  [aj.module("Account").json, "Class"],
  [aj.indifferent({ a: 1 }).json, "ActiveSupport::HashWithIndifferentAccess"],
  [aj.symbolKeys({ a: aj.symbol("b") }).json, "Hash"],
  [aj.record(RAILS_APP, "Account", 1).json, "Account"],
  [aj.kwargs({ note: "hi" }).json, "Hash"],
];

describeEachSidekiq(
  "Rails app: ActiveJob from Rails to Node",
  (sk) => {
    const rails = railsApp(sk);
    let fromRails: { raw: string; classes: string[]; again: string; kw: boolean };

    beforeAll(async () => {
      // One boot: Rails enqueues every serializer for Node, and reads Node's encodings back.
      const node = toRubyJson(encoded.map(([v]) => v));
      fromRails = await rails.eval(`
        account = Account.create!(name: "Acme")
        NodeSideJob.perform_later(
          account, :sym, 1.hour + 30.minutes, Date.new(2024, 2, 29), Time.utc(2024, 1, 2, 3, 4, 5.123r),
          DateTime.new(2024, 1, 2, 3, 4, 5, "+02:00"), Time.find_zone("Europe/Paris").local(2024, 7, 1, 12),
          BigDecimal("1.50"), (1..5), (1.5...2.5), (Date.new(2024, 1, 1)..), Account,
          {a: 1}.with_indifferent_access, {a: :b, "c" => 2}, Money.new(1.0, "EUR"), note: "hi")
        back = ActiveJob::Arguments.deserialize(JSON.parse(${JSON.stringify(node)}))
        {raw: Sidekiq.redis { |r| r.lindex("queue:node", 0) },
         classes: back.map { |v| v.class.name },
         kw: ActiveSupport::HashWithIndifferentAccess === back[13] && back.last.keys == [:note] && back[14].keys == [:a],
         again: JSON.generate(ActiveJob::Arguments.serialize(back))}
      `);
    });

    it("decodes every ActiveJob 7.2 serializer to its documented value", async () => {
      const w = new Worker({
        redis: sk.url,
        dialect: sk.target.version,
        queues: ["node"],
        scheduler: false,
        timeout: 3,
      });
      const got = new Promise<unknown[]>((resolve) => w.registerActiveJob("NodeSideJob", (args) => resolve(args)));
      await w.start();
      try {
        expect(await got).toEqual([
          new GlobalIdRef(`gid://${RAILS_APP}/Account/1`),
          "sym",
          new AjDuration(5400, { hours: 1, minutes: 30 }),
          new Date("2024-02-29T00:00:00Z"),
          new Date("2024-01-02T03:04:05.123Z"),
          new Date("2024-01-02T01:04:05Z"),
          new Date("2024-07-01T10:00:00Z"),
          "1.5",
          new AjRange(1, 5, false),
          new AjRange(1.5, 2.5, true),
          new AjRange(new Date("2024-01-01T00:00:00Z"), null, false),
          new AjModule("Account"),
          { a: 1 },
          { a: "b", c: 2 },
          expect.any(AjSerialized),
          { note: "hi" },
        ]);
        const args = await got;
        // Values Node keeps whole go back to Rails as Rails wrote them, a custom serializer's float included.
        const rubyArgs = (parseJsonKeepingFloats(fromRails.raw) as { args: [{ arguments: RubyJsonValue[] }] }).args[0]
          .arguments;
        expect(toRubyJson(parseJsonKeepingFloats(fromRails.raw))).toBe(fromRails.raw);
        // (A Date decodes to midnight UTC and would go back as a Time: aj.date says Date.)
        for (const i of [0, 2, 4, 8, 9, 10, 11, 14])
          expect(toRubyJson(serializeArgument(args[i])), `argument ${i}`).toBe(toRubyJson(rubyArgs[i]!));
        expect(toRubyJson(rubyArgs[14]!)).toBe('{"_aj_serialized":"MoneySerializer","amount":1.0,"currency":"EUR"}');
      } finally {
        await w.stop();
      }
    });

    it("Node's encodings are read by Rails as the Ruby classes and written back byte for byte", () => {
      expect(fromRails.classes).toEqual(encoded.map(([, cls]) => cls));
      expect(fromRails.kw).toBe(true);
      expect(fromRails.again).toBe(toRubyJson(encoded.map(([v]) => v)));
    });
  },
  (t) => t.suite === "forky",
);
