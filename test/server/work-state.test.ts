// The process's running jobs in one place: the manager's entries (a slot
// taken until the acknowledgement), the busy ones the heartbeat writes, the
// counts per capsule and the TTIN dump.
import { describe, expect, it } from "vitest";
import type { Capsule } from "../../src/core/server/capsule.js";
import { unitOfWork, type Fetcher } from "../../src/core/server/fetch/fetch.js";
import { processJob } from "../../src/core/server/processor.js";
import { WorkState } from "../../src/core/server/work-state.js";
import { offlineProcessorDeps, offlineWork } from "../../harness/processor-deps.js";

const capsule = (name: string) => ({ name, concurrency: 5, weights: {}, mode: "strict", queues: [] }) as Capsule;
const fetcher = {} as Fetcher;
const job = (jid: string) => `{"class":"A","args":[],"jid":"${jid}","queue":"q"}`;

describe("WorkState", () => {
  it("gives each job a tid of its own and holds it until it finishes", () => {
    const work = new WorkState();
    const [a, b] = [capsule("a"), capsule("b")];
    const w1 = work.start(unitOfWork("queue:q", Buffer.from(job("1"))), fetcher, a);
    const w2 = work.start(unitOfWork("queue:q", Buffer.from(job("2"))), fetcher, b);
    const w3 = work.start(unitOfWork("queue:q", Buffer.from(job("3"))), fetcher, a);
    expect(new Set([w1.tid, w2.tid, w3.tid]).size).toBe(3);
    expect([work.count(), work.count(a), work.count(b)]).toEqual([3, 2, 1]);
    expect(work.of(a)).toEqual([w1, w3]);
    work.finish(w1);
    expect([work.count(), work.count(a)]).toEqual([2, 1]);
    expect(work.of(a)).toEqual([w3]);
  });

  it("shows the heartbeat only the jobs the processor marked busy, with the payload as fetched", () => {
    const work = new WorkState();
    const c = capsule("default");
    const w1 = work.start(unitOfWork("queue:q", Buffer.from(job("1"))), fetcher, c);
    work.start(unitOfWork("queue:q", Buffer.from(job("2"))), fetcher, c);
    expect([...work.busy()]).toEqual([]);
    w1.runAt = 1795305965;
    expect([...work.busy()]).toEqual([{ tid: w1.tid, queue: "q", payload: job("1"), runAt: 1795305965 }]);
    w1.runAt = undefined;
    expect([...work.busy()]).toEqual([]);
  });

  it("dumps every slot, with the jid the processor read from the parsed job", () => {
    const work = new WorkState();
    const c = capsule("default");
    const w1 = work.start(unitOfWork("queue:q", Buffer.from(job("abc"))), fetcher, c);
    expect(work.dump()).toMatchObject([{ tid: w1.tid, queue: "q", jid: undefined }]);
    w1.jid = "abc";
    const [slot] = work.dump();
    expect(slot).toMatchObject({ tid: w1.tid, queue: "q", jid: "abc" });
    expect(slot!.runningFor).toBeGreaterThanOrEqual(0);
  });

  it("is marked busy by the processor while the handler runs, with the jid of the parsed job", async () => {
    const seen: Array<[string | undefined, boolean]> = [];
    const uow = unitOfWork("queue:q", Buffer.from(job("0123456789abcdef01234567")));
    const w = offlineWork(uow);
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    const deps = offlineProcessorDeps({
      handlers: { A: () => void seen.push([w.jid, w.runAt !== undefined]) },
      logger: quiet,
    });
    expect(await processJob(w, deps)).toBe("ack");
    expect(seen).toEqual([["0123456789abcdef01234567", true]]);
    expect(w.runAt).toBeUndefined();
  });
});
