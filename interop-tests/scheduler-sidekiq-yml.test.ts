// A sidekiq.yml read by Node for sidekiq-scheduler gives the schedule that
// real Sidekiq's own config loader (Sidekiq::CLI#parse_config: YAML, symbol
// keys, the environment's section merged over the top) gives the gem.
import { expect, it } from "vitest";
import { schedulerSettingsFromSidekiqYml } from "../src/addons/sidekiq-scheduler/sidekiq-yml.js";
import { describeEachSidekiq } from "./support/harness.js";

const YML = `
:concurrency: 5
:scheduler:
  :dynamic: true
  :schedule:
    hello_world:
      cron: '0 * * * * *'
      class: HelloWorld
      queue: low
      args: [1, "two", 3.5]
    report:
      every: ['1h', first_in: '10m']
      class: ReportJob
      description: "hourly"
      enabled: false
production:
  :scheduler:
    :schedule:
      only_in_production:
        at: '3001/01/01'
        class: FarAwayJob
`;

describeEachSidekiq("sidekiq.yml's :scheduler: section, read by Node and by Sidekiq", (sk) => {
  for (const env of ["development", "production"]) {
    it(`the ${env} schedule is the one Sidekiq's config loader hands the gem`, async () => {
      const node = await schedulerSettingsFromSidekiqYml(YML, env);
      const ruby = await sk.ruby<{ schedule: unknown; dynamic: unknown }>(`
        require "sidekiq/cli"
        path = "/tmp/sidekiq-bridge-#{Process.pid}.yml"
        File.write(path, ${JSON.stringify(YML)})
        cli = Sidekiq::CLI.instance
        cli.instance_variable_set(:@environment, ${JSON.stringify(env)})
        opts = cli.send(:parse_config, path)
        File.delete(path)
        s = opts[:scheduler] || {}
        {"schedule" => s[:schedule], "dynamic" => s[:dynamic]}
      `);
      expect(node.schedule).toEqual(ruby.schedule);
      expect(node.dynamic ?? null).toEqual(ruby.dynamic);
    });
  }
});
