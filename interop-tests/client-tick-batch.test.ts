// Single pushes made in the same tick go out as one SADD and one LPUSH
// per queue (push_bulk's shape). Ruby must see exactly what a raw_push per job
// would leave: every job, in call order, in its own queue, the queues known.
import { expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { describeEachSidekiq } from "./support/harness.js";

describeEachSidekiq("client: single pushes of one tick", (sk) => {
  it("300 performAsync calls over two queues in one tick: Ruby's API sees each job once, in call order, per queue", async () => {
    const c = new Client({ redis: sk.url, dialect: sk.target.version });
    const job = (q: string) => c.job<[number]>("RecordJob", { queue: q });
    const [qa, qb] = ["tick-a", "tick-b"];
    const jids = await Promise.all(Array.from({ length: 300 }, (_, i) => job(i % 3 === 0 ? qb : qa).performAsync(i)));
    await c.close();
    const seen = await sk.ruby<{ a: Array<[string, number]>; b: Array<[string, number]>; queues: string[] }>(`
      # Queue#each walks from the newest job; reverse it to get push order.
      f = ->(q) { Sidekiq::Queue.new(q).map { |j| [j.jid, j.args[0]] }.reverse }
      {"a" => f.(${JSON.stringify(qa)}), "b" => f.(${JSON.stringify(qb)}), "queues" => Sidekiq::Queue.all.map(&:name)}
    `);
    const expected = (pred: (i: number) => boolean) =>
      jids.map((j, i) => [j, i] as [string, number]).filter(([, i]) => pred(i));
    expect(seen.a).toEqual(expected((i) => i % 3 !== 0));
    expect(seen.b).toEqual(expected((i) => i % 3 === 0));
    expect(seen.queues).toEqual(expect.arrayContaining([qa, qb]));
  });
});
