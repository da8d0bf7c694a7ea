// sidekiq-scheduler's entry: its option, flag and service names stay clear of
// `scheduler` (Sidekiq's own poller of scheduled jobs and retries), its
// command and its tab on the gem's routes.
import { describe, expect, it } from "vitest";
import { addonCommands, addons } from "../../src/assembly/registry.js";
import { help } from "../../src/assembly/worker-command.js";
import { sidekiqSchedulerAddon } from "../../src/addons/sidekiq-scheduler/addon.js";
import { installSidekiqScheduler } from "../../src/addons/sidekiq-scheduler/install.js";
import { SidekiqSchedulerPoller } from "../../src/addons/sidekiq-scheduler/poller.js";

describe("the sidekiq-scheduler add-on", () => {
  it("is registered, on by default, under names of its own", () => {
    expect(addons()).toContain(sidekiqSchedulerAddon);
    expect(sidekiqSchedulerAddon.name).toBe("sidekiqScheduler");
    expect(sidekiqSchedulerAddon.onByDefault).toBe(true);
    expect(help).toMatch(/--no-sidekiq-scheduler\s+do not run sidekiq-scheduler's scheduler/);
    expect(Object.keys(addonCommands())).toContain("schedule");
    expect(addons().filter((a) => a.name === "scheduler")).toEqual([]);
  });

  it("installs one service named sidekiq-scheduler, none when the section says enabled: false", () => {
    const services: unknown[] = [];
    const seams = {
      service: (f: (ctx: never) => unknown) => services.push(f({ redis: {}, client: {}, logger: console } as never)),
      isActiveJobClass: () => false,
    };
    installSidekiqScheduler(seams as never, true);
    expect(services).toHaveLength(1);
    expect(services[0]).toBeInstanceOf(SidekiqSchedulerPoller);
    expect((services[0] as SidekiqSchedulerPoller).name).toBe("sidekiq-scheduler");
    installSidekiqScheduler(seams as never, { enabled: false });
    expect(services).toHaveLength(1);
  });

  it("serves the gem's Web UI routes", () => {
    const routes = sidekiqSchedulerAddon.web!.routes;
    const match = (method: string, path: string) =>
      routes.filter((r) => r.method === method && r.pattern.test(path)).map((r) => r.pattern.exec(path)!.slice(1));
    expect(sidekiqSchedulerAddon.web!.path).toBe("/recurring-jobs");
    expect(match("GET", "/recurring-jobs")).toHaveLength(1);
    expect(match("POST", "/recurring-jobs/toggle-all")).toEqual([[]]);
    expect(match("POST", "/recurring-jobs/nightly%20report/toggle")).toEqual([["nightly%20report", "toggle"]]);
    expect(match("POST", "/recurring-jobs/nightly/enqueue")).toEqual([["nightly", "enqueue"]]);
    expect(match("POST", "/recurring-jobs/nightly/delete")).toEqual([]);
  });
});
