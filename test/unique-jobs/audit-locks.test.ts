// `migrate audit` and sidekiq-unique-jobs: a queue whose jobs carry locks is
// BLOCKED until the Node worker runs the unique-jobs middleware.
import { describe, expect, it } from "vitest";
import { judgeQueue, type ClassUsage } from "../../src/tools/migration/audit.js";
import { auditAddons } from "../../src/assembly/audits.js";
import { collectHandlers } from "../../src/assembly/migration.js";
import { uniqueJobs } from "../../src/addons/sidekiq-unique-jobs/index.js";

const usage = (o: Partial<ClassUsage> = {}): ClassUsage => ({
  name: "BillingJob",
  activeJob: false,
  queued: 3,
  scheduled: 0,
  retry: 0,
  dead: 0,
  handled: true,
  ...o,
});

describe("audit of queues with unique-jobs locks", () => {
  it("BLOCKED with the reason when jobs carry locks and the middleware is off", () => {
    const a = judgeQueue("b", 3, [usage({ locks: { until_executed: 3 } })], [], { addons: auditAddons() });
    expect(a.verdict).toBe("BLOCKED");
    expect(a.reasons).toHaveLength(1);
    expect(a.reasons[0]).toContain("BillingJob jobs carry sidekiq-unique-jobs locks (3 with lock: until_executed)");
    expect(a.reasons[0]).toContain("turn on uniqueJobs");
    expect(a.missing).toEqual([]);
  });

  it("READY when the worker runs the middleware, or no job carries a lock", () => {
    expect(
      judgeQueue("b", 3, [usage({ locks: { until_executed: 3 } })], [], { uniqueJobs: true, addons: auditAddons() })
        .verdict,
    ).toBe("READY");
    expect(judgeQueue("b", 3, [usage()], [], { addons: auditAddons() }).verdict).toBe("READY");
  });

  it("a handlers module that uses uniqueJobs().middleware turns it on", async () => {
    const on = await collectHandlers({
      default: (w: { use: Function; onDeath: Function; register: Function }) => {
        const u = uniqueJobs();
        w.use(u.middleware)
          .onDeath(u.onDeath)
          .register("BillingJob", () => undefined);
      },
    });
    expect(on.uniqueJobs).toBe(true);
    const off = await collectHandlers({
      default: (w: { use: Function; register: Function }) => {
        w.use(async () => undefined).register("BillingJob", () => undefined);
      },
    });
    expect(off.uniqueJobs).toBeUndefined();
  });
});
