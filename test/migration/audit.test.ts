// Pure logic of `migrate audit`: reading a handlers module without Redis, and
// the READY/BLOCKED verdict.
import { describe, expect, it } from "vitest";
import { emptyHandlers, judgeQueue, type ClassUsage, type ProcessSummary } from "../../src/tools/migration/audit.js";
import { collectHandlers } from "../../src/assembly/migration.js";

const usage = (name: string, o: Partial<ClassUsage> = {}): ClassUsage => ({
  name,
  activeJob: false,
  queued: 0,
  scheduled: 0,
  retry: 0,
  dead: 0,
  handled: false,
  ...o,
});
const proc = (o: Partial<ProcessSummary>): ProcessSummary => ({
  identity: "h:1:abc",
  runtime: "ruby",
  queues: [],
  labels: [],
  quiet: false,
  ...o,
});

describe("collectHandlers", () => {
  it("records what a worker -r module registers, chained calls and middleware included", async () => {
    const mod = {
      default: async (w: { register: Function; registerActiveJob: Function; use: Function; onDeath: Function }) => {
        w.use(async () => undefined)
          .register("A", () => undefined, { retryIn: () => 1 })
          .register("B", () => undefined);
        w.registerActiveJob("ReindexJob", () => undefined);
        w.onDeath(() => undefined);
      },
    };
    const h = await collectHandlers(mod);
    expect([...h.classes].sort()).toEqual(["A", "B"]);
    expect([...h.activeJobClasses]).toEqual(["ReindexJob"]);
  });

  it("takes an object of handlers (named exports or a default object)", async () => {
    expect([...(await collectHandlers({ HardJob: () => 1, notAHandler: 3 })).classes]).toEqual(["HardJob"]);
    expect([...(await collectHandlers({ default: { X: () => 1 } })).classes]).toEqual(["X"]);
  });

  it("adds to what it is given, and refuses a module with neither shape", async () => {
    const into = emptyHandlers();
    into.classes.add("Given");
    await collectHandlers({ default: (w: { register: Function }) => void w.register("More", () => 0) }, into);
    expect([...into.classes].sort()).toEqual(["Given", "More"]);
    await expect(collectHandlers({ default: 42 })).rejects.toThrow(/neither a function nor an object/);
  });
});

describe("judgeQueue", () => {
  const ruby = proc({ identity: "rb:1:aa", version: "8.1.7", queues: ["a", "b", "c"] });
  const node = proc({ identity: "nd:2:bb", runtime: "node", version: "8.1.7-sidekiq-bridge.0.1.0", queues: ["b"] });

  it("READY when every class in the queue, schedule and retry has a Node handler", () => {
    const q = judgeQueue(
      "b",
      3,
      [
        usage("BJob", { queued: 3, retry: 1, handled: true }),
        usage("Aj", { activeJob: true, scheduled: 2, handled: true }),
      ],
      [ruby, node],
    );
    expect(q.verdict).toBe("READY");
    expect(q.missing).toEqual([]);
    expect(q.servedBy.map((p) => [p.runtime, p.version])).toEqual([
      ["ruby", "8.1.7"],
      ["node", "8.1.7-sidekiq-bridge.0.1.0"],
    ]);
  });

  it("BLOCKED naming each class without a handler and where it sits", () => {
    const q = judgeQueue(
      "a",
      2,
      [usage("AJob", { queued: 2 }), usage("Later", { scheduled: 1 }), usage("Ok", { queued: 1, handled: true })],
      [ruby],
    );
    expect(q.verdict).toBe("BLOCKED");
    expect(q.missing).toEqual(["AJob", "Later"]);
    expect(q.reasons).toEqual(["no Node handler for AJob (2 queued)", "no Node handler for Later (1 scheduled)"]);
  });

  it("a class only in the dead set is a warning, or a blocker when asked", () => {
    const classes = [usage("Old", { dead: 4 })];
    expect(judgeQueue("c", 0, classes, [ruby]).verdict).toBe("READY");
    expect(judgeQueue("c", 0, classes, [ruby]).warnings.join()).toMatch(/only in the dead set \(4\)/);
    expect(judgeQueue("c", 0, classes, [ruby], { deadBlocks: true }).verdict).toBe("BLOCKED");
  });

  it("says when nothing was seen or nobody serves the queue", () => {
    const q = judgeQueue("empty", 0, [], []);
    expect(q.verdict).toBe("READY");
    expect(q.warnings).toEqual(
      expect.arrayContaining([expect.stringMatching(/no jobs seen/), expect.stringMatching(/no live process/)]),
    );
  });
});

describe("audit and IterableJob state", () => {
  const ruby = proc({ identity: "rb:1:aa", version: "8.1.7", queues: ["it"] });

  it("records registerIterable as a handled, iterable class", async () => {
    const h = await collectHandlers({
      default: (w: { registerIterable: Function; register: Function }) => {
        w.registerIterable("ScanJob", {});
        w.register("Plain", () => 0);
      },
    });
    expect([...h.classes].sort()).toEqual(["Plain", "ScanJob"]);
    expect([...(h.iterableClasses ?? [])]).toEqual(["ScanJob"]);
  });

  it("BLOCKED when jobs with a saved cursor would meet a plain Node handler; READY with an iterable one", () => {
    const plain = judgeQueue("it", 2, [usage("ScanJob", { queued: 2, handled: true, iterating: 1 })], [ruby]);
    expect(plain.verdict).toBe("BLOCKED");
    expect(plain.reasons).toEqual([
      "ScanJob has 1 job(s) with a saved IterableJob cursor (it-<jid>) but its Node handler is not iterable: register it with registerIterable",
    ]);
    const iterable = judgeQueue(
      "it",
      2,
      [usage("ScanJob", { queued: 2, handled: true, iterating: 1, iterableHandler: true })],
      [ruby],
    );
    expect(iterable.verdict).toBe("READY");
  });

  it("a class with no handler at all says it is an IterableJob", () => {
    const q = judgeQueue("it", 1, [usage("ScanJob", { retry: 1, iterating: 1 })], [ruby]);
    expect(q.verdict).toBe("BLOCKED");
    expect(q.warnings.join()).toMatch(/ScanJob is an IterableJob \(1 job\(s\) with a saved IterableJob cursor/);
  });
});
