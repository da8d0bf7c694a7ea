// The add-on sweep's probes (interop-tests/release-sweep-addons.test.ts): for
// each gem, what Node does before this release's Ruby runs, the Ruby that
// reads it and leaves its own for Node, and what Node checks after. Every
// probe of a group (support-matrix.ts addonGroups) runs in one Ruby process.
// Names carry the gem release's tag, so the groups of a release never meet.
import { expect } from "vitest";
import { Client } from "../../src/core/client/client.js";
import { CronApi } from "../../src/addons/sidekiq-cron/index.js";
import { SchedulerApi } from "../../src/addons/sidekiq-scheduler/scheduler-api.js";
import { resolveThrottled } from "../../src/addons/sidekiq-throttled/options.js";
import { Strategy } from "../../src/addons/sidekiq-throttled/strategy.js";
import { uniqueJobsClient } from "../../src/addons/sidekiq-unique-jobs/index.js";
import type { SidekiqContext } from "./harness.js";
import type { AddonGem, AddonRelease } from "./support-matrix.js";
import { rubyThrottles } from "./throttled.js";

type View = Record<string, unknown>;

export interface AddonProbe {
  /** Folders of shared/peers/ruby beside the gem's own. */
  peers: readonly string[];
  /** Ruby that loads the gem (and its job classes). */
  load: string;
  /** Node's side before Ruby runs. */
  before(sk: SidekiqContext, a: AddonRelease, tag: string): Promise<void>;
  /** A Ruby expression giving this gem's view (a Hash). */
  ruby(tag: string): string;
  /** Node's checks of Ruby's view, and of what Ruby left. */
  after(sk: SidekiqContext, a: AddonRelease, tag: string, view: View): Promise<void>;
}

/** A short name for a gem release ("sidekiq-throttled-2.1.0" -> "st210"). */
export function tagOf(a: AddonRelease): string {
  return (
    a.gem
      .replace(/[^a-z]+/g, " ")
      .trim()
      .split(" ")
      .map((w) => w[0])
      .join("") + a.version.replace(/\D/g, "")
  );
}

const FIXTURE = (name: string) =>
  `require File.join(File.dirname($LOADED_FEATURES.grep(%r{/lib/jobs\\.rb\\z}).first), "${name}")`;

async function withClient<T>(sk: SidekiqContext, fn: (c: Client) => Promise<T>, gem?: 8 | 9): Promise<T> {
  const c = new Client({ redis: sk.url, dialect: sk.target.version });
  if (gem) c.use(uniqueJobsClient({ gem }));
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const cron: AddonProbe = {
  peers: ["fugit-1.13.0", "cronex-0.15.0"],
  load: `require "sidekiq-cron"\nSidekiq::Cron.configure { |c| c.available_namespaces = :auto }`,
  async before(sk, _a, tag) {
    await withClient(sk, (client) =>
      new CronApi({ redis: sk.redis, client }).create({
        name: `node-${tag}`,
        cron: "*/5 * * * *",
        class: "RecordJob",
        queue: `cron-n-${tag}`,
        args: ["node"],
      }),
    );
  },
  ruby: (tag) => `
    n = Sidekiq::Cron::Job.find("node-${tag}")
    n&.enqueue!
    Sidekiq::Cron::Job.create("name" => "ruby-${tag}", "cron" => "0 3 * * *", "class" => "RecordJob",
      "queue" => "cron-r-${tag}", "args" => ["ruby"])
    {"listed" => Sidekiq::Cron::Job.all.map(&:name).include?("node-${tag}"), "cron" => n&.cron, "klass" => n&.klass,
     "pushed" => Sidekiq::Queue.new("cron-n-${tag}").map { |j| [j.klass, j.args] }}`,
  async after(sk, _a, tag, view) {
    expect(view).toEqual({ listed: true, cron: "*/5 * * * *", klass: "RecordJob", pushed: [["RecordJob", ["node"]]] });
    await withClient(sk, async (client) => {
      const api = new CronApi({ redis: sk.redis, client });
      const r = await api.find(`ruby-${tag}`);
      expect({ cron: r?.cron, klass: r?.klass, queue: r?.queue, args: r?.args }).toEqual({
        cron: "0 3 * * *",
        klass: "RecordJob",
        queue: `cron-r-${tag}`,
        args: ["ruby"],
      });
      const jid = await api.enqueue(`ruby-${tag}`);
      const pushed = JSON.parse((await sk.redis.lindex(`queue:cron-r-${tag}`, 0))!) as View;
      expect(pushed).toMatchObject({ jid, class: "RecordJob", args: ["ruby"] });
      // Ruby's enqueue! of Node's job went into the history Node reads.
      expect((await api.jidHistory(`node-${tag}`)).length).toBe(1);
    });
  },
};

const unique: AddonProbe = {
  peers: [],
  load: FIXTURE("unique_jobs"),
  async before(sk, a, tag) {
    const jid = await withClient(
      sk,
      (c) => c.job("UntilExecutedJob", { queue: `uq-${tag}`, lock: "until_executed" }).performAsync(`node-${tag}`),
      gemOf(a),
    );
    expect(jid).toMatch(/^[0-9a-f]{24}$/);
  },
  ruby: (tag) => `
    j = UntilExecutedJob.set(queue: "uq-${tag}")
    {"node" => j.perform_async("node-${tag}"), "ruby" => j.perform_async("ruby-${tag}")}`,
  async after(sk, a, tag, view) {
    expect(view.node).toBeNull();
    expect(view.ruby).toMatch(/^[0-9a-f]{24}$/);
    const again = await withClient(
      sk,
      (c) => c.job("UntilExecutedJob", { queue: `uq-${tag}`, lock: "until_executed" }).performAsync(`ruby-${tag}`),
      gemOf(a),
    );
    expect(again).toBeNull();
  },
};

const gemOf = (a: AddonRelease): 8 | 9 => (a.version.startsWith("9.") ? 9 : 8);

function concurrency(a: AddonRelease): Strategy {
  const spec = resolveThrottled(rubyThrottles()).byClass.get("ConcurrencyJob")!;
  return new Strategy(spec, a.version.startsWith("1.") ? 1 : 2);
}

const throttled: AddonProbe = {
  peers: ["redis-prescription-standin"],
  load: FIXTURE("throttled_jobs"),
  async before(sk, a, tag) {
    // Both gem lines use the class's keys: the other group's are gone first.
    for (const k of await sk.redis.keys("throttled:ConcurrencyJob:*")) await sk.redis.del(k);
    const s = concurrency(a);
    // ConcurrencyJob's limit is 2: Node takes both slots.
    expect([await s.throttled(sk.redis, `n1-${tag}`, []), await s.throttled(sk.redis, `n2-${tag}`, [])]).toEqual([
      false,
      false,
    ]);
  },
  ruby: (tag) => `
    held = ThrottledState.concurrency_count("ConcurrencyJob")
    refused = ThrottledState.throttled?({"class" => "ConcurrencyJob", "jid" => "r1-${tag}", "args" => []})
    ThrottledState.finalize!("ConcurrencyJob", "n1-${tag}")
    {"held" => held, "refused" => refused, "after" => ThrottledState.concurrency_count("ConcurrencyJob")}`,
  async after(sk, a, tag, view) {
    expect(view).toEqual({ held: 2, refused: true, after: 1 });
    const s = concurrency(a);
    expect([await s.throttled(sk.redis, `n3-${tag}`, []), await s.throttled(sk.redis, `n4-${tag}`, [])]).toEqual([
      false,
      true,
    ]);
  },
};

const scheduler: AddonProbe = {
  peers: ["rufus-scheduler-3.9.2", "fugit-1.13.0"],
  load: `require "sidekiq-scheduler"`,
  async before(sk, _a, tag) {
    const config = { cron: "0 3 * * *", class: "RecordJob", queue: `sch-${tag}`, args: ["node"] };
    expect(await new SchedulerApi({ redis: sk.redis }).set(`node-${tag}`, config)).toBe(true);
  },
  ruby: (tag) => `
    Sidekiq.set_schedule("ruby-${tag}", {"every" => "1h", "class" => "RecordJob", "args" => ["ruby"]})
    {"node" => Sidekiq.get_schedule("node-${tag}")}`,
  async after(sk, _a, tag, view) {
    expect(view.node).toEqual({ cron: "0 3 * * *", class: "RecordJob", queue: `sch-${tag}`, args: ["node"] });
    const r = await new SchedulerApi({ redis: sk.redis }).find(`ruby-${tag}`);
    expect({ type: r?.type, value: r?.value, className: r?.className }).toEqual({
      type: "every",
      value: "1h",
      className: "RecordJob",
    });
  },
};

export const PROBES: Record<AddonGem, AddonProbe> = {
  "sidekiq-cron": cron,
  "sidekiq-unique-jobs": unique,
  "sidekiq-throttled": throttled,
  "sidekiq-scheduler": scheduler,
};

/**
 * Runs one group on this release: every probe's Node side, one Ruby process
 * for all of them, then every probe's checks; the error of each gem release
 * (or none) by folder.
 */
export async function runGroup(sk: SidekiqContext, group: readonly AddonRelease[]): Promise<Map<string, unknown>> {
  const errors = new Map<string, unknown>();
  const live = [];
  for (const a of group) {
    try {
      await PROBES[a.gem].before(sk, a, tagOf(a));
      live.push(a);
    } catch (e) {
      errors.set(a.folder, e);
    }
  }
  const peers = sk.peers(...live.flatMap((a) => [a.folder, ...PROBES[a.gem].peers]));
  const code = [
    ...live.map((a) => PROBES[a.gem].load),
    `{${live.map((a) => `${JSON.stringify(a.folder)} => begin\n${PROBES[a.gem].ruby(tagOf(a))}\nend`).join(",\n")}}`,
  ].join("\n");
  const views = live.length > 0 ? await sk.ruby<Record<string, View>>(code, peers) : {};
  for (const a of live) {
    try {
      await PROBES[a.gem].after(sk, a, tagOf(a), views[a.folder]!);
      errors.set(a.folder, undefined);
    } catch (e) {
      errors.set(a.folder, e);
    }
  }
  return errors;
}
