// sidekiq.yml's :scheduler: section, read as Sidekiq and sidekiq-scheduler
// read it: symbol keys or plain ones, the environment's section over the top
// level, and a clear error for what only Ruby can read.
import { describe, expect, it } from "vitest";
import { schedulerSettingsFromSidekiqYml, SidekiqYmlError } from "../../src/addons/sidekiq-scheduler/sidekiq-yml.js";

const YML = `
:concurrency: 5
:queues:
  - default
:scheduler:
  :dynamic: true
  :dynamic_every: 10s
  :schedule:
    hello_world:
      cron: '0 * * * * *'   # every minute
      class: HelloWorld
      queue: low
      args: [1, "two"]
    report:
      every: ['1h', first_in: '10m']
      class: ReportJob
      description: "hourly"
production:
  :scheduler:
    :schedule:
      only_in_production:
        at: '3001/01/01'
        class: FarAwayJob
`;

describe("sidekiq.yml for sidekiq-scheduler", () => {
  it("reads the :scheduler: section with Ruby's symbol keys, names and options as written", async () => {
    const s = await schedulerSettingsFromSidekiqYml(YML, "development");
    expect(s.dynamic).toBe(true);
    expect(s.dynamicEvery).toBe("10s");
    expect(Object.keys(s.schedule!)).toEqual(["hello_world", "report"]);
    expect(s.schedule!.hello_world).toEqual({
      cron: "0 * * * * *",
      class: "HelloWorld",
      queue: "low",
      args: [1, "two"],
    });
    expect(s.schedule!.report).toEqual({
      every: ["1h", { first_in: "10m" }],
      class: "ReportJob",
      description: "hourly",
    });
  });

  it("merges the environment's section over the top level, as Sidekiq's CLI does", async () => {
    const s = await schedulerSettingsFromSidekiqYml(YML, "production");
    expect(Object.keys(s.schedule!)).toEqual(["only_in_production"]);
    expect(s.dynamic).toBeUndefined();
  });

  it("plain keys read the same; no section, no settings", async () => {
    const s = await schedulerSettingsFromSidekiqYml("scheduler:\n  enabled: false\n", "development");
    expect(s).toEqual({ enabled: false });
    expect(await schedulerSettingsFromSidekiqYml(":concurrency: 2\n")).toEqual({});
    expect(await schedulerSettingsFromSidekiqYml("")).toEqual({});
  });

  it("refuses ERB, YAML that is not a mapping, and a schedule that is not one, saying which", async () => {
    await expect(schedulerSettingsFromSidekiqYml(":concurrency: <%= ENV['C'] %>\n")).rejects.toThrow(/ERB/);
    await expect(schedulerSettingsFromSidekiqYml("- a\n- b\n")).rejects.toThrow(SidekiqYmlError);
    await expect(schedulerSettingsFromSidekiqYml(":scheduler:\n  :schedule: [1]\n")).rejects.toThrow(
      ":scheduler: :schedule: must be a mapping",
    );
    await expect(schedulerSettingsFromSidekiqYml("a: [1\n")).rejects.toThrow(/not YAML/);
  });
});
