// Node's ActiveJob value helpers against Rails as the oracle, over generated
// values (chaos/fuzz/rails-values.ts, seeded): what `aj.bigDecimal`,
// `aj.timeWithZone`, `aj.time`, `aj.dateTime`, `aj.duration` and `aj.range`
// write must be ActiveJob::Serializers.serialize's bytes, refused where Ruby
// refuses; a Range or Duration decoded from Rails' bytes and handed back must
// be those bytes again. One boot of the Rails app for the whole batch
// (ruby-fixtures/rails-app/bin/values.rb). RAILS_VALUES_CASES sets the count
// (npm run fuzz:rails-values runs 50,000), RAILS_VALUES_SEED the seed.
import { beforeAll, expect, it } from "vitest";
import { valueCases, nodeValue, type ValueCase } from "../chaos/fuzz/rails-values.js";
import { serializeArgument } from "../src/core/client/activejob.js";
import { deserializeArgument } from "../src/core/server/activejob-args.js";
import { parseJsonKeepingFloats } from "../src/core/wire/json-scan.js";
import { RAILS_TIME_ZONES } from "../src/core/wire/rails-time-zones.js";
import { toRubyJson } from "../src/core/wire/ruby-json.js";
import { describeEachSidekiq } from "./support/harness.js";
import { railsApp } from "./support/rails-app.js";

const CASES = Number(process.env.RAILS_VALUES_CASES ?? 3000);
/** Fixed, so CI is repeatable; RAILS_VALUES_SEED explores others. */
const SEED = Number(process.env.RAILS_VALUES_SEED ?? 2026);

type Oracle = { json: string } | { error: string; message: string };

/** Node's bytes for a case, or "refused" where a helper threw. */
function nodeBytes(c: ValueCase): string {
  try {
    return toRubyJson(nodeValue(c));
  } catch {
    return "refused";
  }
}

const label = (c: ValueCase) => `RAILS_VALUES_SEED=${SEED} ${JSON.stringify(c)}`;

describeEachSidekiq(
  "Rails app: ActiveJob values as Rails writes them",
  (sk) => {
    const rails = railsApp(sk);
    const cases = valueCases(SEED, CASES);
    let results: Oracle[];
    let mapping: Record<string, string>;

    beforeAll(async () => {
      const key = `rails-values:${process.pid}`;
      await sk.redis.set(`${key}:in`, JSON.stringify(cases));
      await sk.rubyScript("rails-app/bin/values.rb", [key], rails.env());
      ({ results, mapping } = JSON.parse((await sk.redis.get(`${key}:out`))!) as {
        results: Oracle[];
        mapping: Record<string, string>;
      });
    });

    it("ActiveSupport::TimeZone::MAPPING is Node's table, in Rails' order", () => {
      expect(Object.entries(RAILS_TIME_ZONES)).toEqual(Object.entries(mapping));
    });

    it("writes each value as Rails serializes it, and refuses what Ruby refuses", () => {
      expect(results).toHaveLength(cases.length);
      // Zones this system's tzdata lacks (Debian keeps old links such as Asia/Calcutta in tzdata-legacy):
      // Node writes what Rails writes where it has them. Each zone has a case of its own.
      const unknownToRails = new Set(
        cases.flatMap((c, i) => {
          const r = results[i]!;
          return c.t === "tz" && "error" in r && r.message === "unknown zone" ? [c.zone] : [];
        }),
      );
      const namesUnknown = (c: ValueCase) => [...unknownToRails].some((z) => JSON.stringify(c).includes(`"${z}"`));
      const wrong: string[] = [];
      cases.forEach((c, i) => {
        const r = results[i]!;
        const node = nodeBytes(c);
        if ("json" in r) {
          if (node !== r.json) wrong.push(`${label(c)}\n  Rails ${r.json}\n  Node  ${node}`);
        } else if (node !== "refused" && !(r.message === "unknown zone" && namesUnknown(c)))
          wrong.push(`${label(c)}\n  Rails raised ${r.error}: ${r.message}\n  Node  ${node}`);
      });
      expect(wrong.slice(0, 10)).toEqual([]);
      // Not a run that compared nothing: almost every zone is known to both.
      expect(unknownToRails.size).toBeLessThan(40);
      expect(results.filter((r) => "json" in r).length).toBeGreaterThan(cases.length * 0.8);
    });

    it("a Range or Duration decoded from Rails and handed back is what Rails wrote, byte for byte", () => {
      const wrong: string[] = [];
      let checked = 0;
      cases.forEach((c, i) => {
        const r = results[i]!;
        if (!("json" in r) || (c.t !== "range" && c.t !== "dur")) return;
        checked++;
        const back = toRubyJson(serializeArgument(deserializeArgument(parseJsonKeepingFloats(r.json))));
        if (back !== r.json) wrong.push(`${label(c)}\n  Rails ${r.json}\n  back  ${back}`);
      });
      expect(wrong.slice(0, 10)).toEqual([]);
      expect(checked).toBeGreaterThan(CASES / 4);
    });
  },
  (t) => t.suite === "forky",
);
