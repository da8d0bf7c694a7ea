// Reading a sidekiq-scheduler schedule as the gem does, and the job it pushes.
import { describe, expect, it } from "vitest";
import { scheduleItem } from "../../src/addons/sidekiq-scheduler/enqueue.js";
import {
  entryProblems,
  intervalOf,
  parseEntry,
  prepareStatic,
  railsEnvMatches,
  readEntry,
} from "../../src/addons/sidekiq-scheduler/schedule-entry.js";
import { RubyFloat, toRubyJson, type RubyJsonValue } from "../../src/core/wire/ruby-json.js";

const NOW = Date.UTC(2026, 10, 26, 14, 41, 30);

describe("a schedule's config", () => {
  it("takes the first kind present and not empty, in the gem's order", () => {
    expect(readEntry("a", { cron: "* * * * *", every: "1m", class: "A" }).type).toBe("cron");
    expect(readEntry("a", { cron: "", every: "1m", class: "A" }).type).toBe("every");
    expect(readEntry("a", { interval: "1m", in: "5s", class: "A" }).type).toBe("in");
    expect(readEntry("a", { class: "A" }).type).toBeUndefined();
  });
  it("defaults the queue to default and enabled to true", () => {
    const e = readEntry("a", { every: "1m", class: "A" });
    expect([e.queue, e.enabledInConfig]).toEqual(["default", true]);
    expect(readEntry("a", { every: "1m", class: "A", enabled: false, queue: "low" })).toMatchObject({
      queue: "low",
      enabledInConfig: false,
    });
  });
  it("names the problem: no kind, a bad expression, no class", () => {
    expect(entryProblems(readEntry("a", { class: "A" }), NOW)).toEqual(["no cron / every / at / in / interval found"]);
    expect(entryProblems(readEntry("a", { cron: "99 * * * *", class: "A" }), NOW)[0]).toMatch(/invalid cron line/);
    expect(entryProblems(readEntry("a", { every: "1m" }), NOW)).toEqual([
      "no class (Sidekiq::Client.push refuses a job without one)",
    ]);
    expect(entryProblems(readEntry("a", { every: "1m", class: "A" }), NOW)).toEqual([]);
  });
  it("refuses a value that is not JSON, or not an object", () => {
    expect(() => parseEntry("a", "{nope")).toThrow(/not JSON/);
    expect(() => parseEntry("a", '"every 1m"')).toThrow(/not a JSON object/);
  });
  it("runs a rails_env schedule only in one of its environments", () => {
    const e = readEntry("a", { every: "1m", class: "A", rails_env: "production, staging" });
    expect(railsEnvMatches(e, "staging")).toBe(true);
    expect(railsEnvMatches(e, "development")).toBe(false);
    expect(railsEnvMatches(e, undefined)).toBe(false);
    expect(railsEnvMatches(readEntry("a", { every: "1m", class: "A" }), undefined)).toBe(true);
  });
  it("shows the interval as the Web UI does (cron, interval, every, at, in)", () => {
    expect(intervalOf(readEntry("a", { every: ["1m", { first_in: "5s" }], class: "A" }))).toBe(
      '["1m",{"first_in":"5s"}]',
    );
    expect(intervalOf(readEntry("a", { cron: "0 * * * *", class: "A" }))).toBe("0 * * * *");
  });
  it("a static schedule's name is its class when it has none", () => {
    expect(prepareStatic({ HardJob: { every: "1m" }, b: { every: "1m", class: "B" } })).toEqual({
      HardJob: { every: "1m", class: "HardJob" },
      b: { every: "1m", class: "B" },
    });
  });
});

describe("the job a schedule pushes", () => {
  it("drops the rufus keys and keeps every other option, in order", () => {
    const e = readEntry("a", {
      cron: "* * * * *",
      class: "A",
      queue: "low",
      args: ["x"],
      description: "d",
      enabled: true,
      retry: 3,
      custom: 1,
    });
    expect(scheduleItem(e, NOW)).toEqual({ class: "A", queue: "low", args: ["x"], retry: 3, custom: 1 });
  });
  it("makes args an Array as Ruby's Array() does, a Hash staying a Hash", () => {
    expect(scheduleItem(readEntry("a", { every: "1m", class: "A" }), NOW).args).toEqual([]);
    expect(scheduleItem(readEntry("a", { every: "1m", class: "A", args: "one" }), NOW).args).toEqual(["one"]);
    expect(scheduleItem(readEntry("a", { every: "1m", class: "A", args: { k: 1 } }), NOW).args).toEqual({ k: 1 });
  });
  it("include_metadata appends scheduled_at, a float rounded to the millisecond", () => {
    const e = readEntry("a", { every: "1m", class: "A", args: ["x"], include_metadata: true });
    const item = scheduleItem(e, NOW + 123.6);
    expect("include_metadata" in item).toBe(false);
    expect(toRubyJson(item.args as RubyJsonValue)).toBe('["x",{"scheduled_at":1795704090.124}]');
    const whole = scheduleItem(e, NOW).args as [string, { scheduled_at: RubyFloat }];
    expect(toRubyJson(whole as unknown as RubyJsonValue)).toBe('["x",{"scheduled_at":1795704090.0}]');
    const hash = scheduleItem(readEntry("a", { every: "1m", class: "A", args: { k: 1 }, include_metadata: true }), NOW);
    expect(toRubyJson(hash.args as RubyJsonValue)).toBe('[{"k":1},{"scheduled_at":1795704090.0}]');
  });
});
