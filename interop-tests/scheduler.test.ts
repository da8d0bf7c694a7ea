// sidekiq-scheduler with a Node scheduler: schedules the real gem wrote
// (5.0.6 on Sidekiq 6.4, 6.0.2 on 7.3 and 8.1) keep firing with no Ruby
// process left; Ruby's Recurring Jobs tab shows what Node wrote; a schedule
// toggled on either side is respected by both; bad entries are logged once
// each and the others keep firing.
import { expect, it } from "vitest";
import type { Logger } from "../src/core/logging/logger.js";
import { SchedulerApi } from "../src/addons/sidekiq-scheduler/scheduler-api.js";
import { formatEoTime, parseDuration, parsePointInTime, timingFor } from "../src/addons/sidekiq-scheduler/timing.js";
import { Worker } from "../src/assembly/worker.js";
import { describeEachSidekiq, waitFor, type SidekiqContext } from "./support/harness.js";
import { renderRecurringJobs, schedulerRuby, startRubyScheduler } from "./support/scheduler.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GEM_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}$/;

/** A logger that keeps Node's claims: the seconds it won (and pushed), and all it claimed, won or lost. */
function collect(): { logger: Logger; lines: string[]; pushed: string[]; claimed: string[] } {
  const lines: string[] = [];
  const pushed: string[] = [];
  const claimed: string[] = [];
  const logger: Logger = {
    debug: (m, ctx) => {
      if (m.startsWith("sidekiq-scheduler: queueing")) pushed.push(String(ctx?.claimed));
      if (m.startsWith("sidekiq-scheduler: queueing") || m.endsWith(" already enqueued"))
        claimed.push(String(ctx?.claimed));
    },
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
  return { logger, lines, pushed, claimed };
}

function nodeWorker(sk: SidekiqContext, logger: Logger): Worker {
  return new Worker({
    redis: sk.url,
    dialect: sk.target.version,
    queues: ["scheduler-none"],
    scheduler: false,
    timeout: 3,
    logger,
    sidekiqScheduler: { dynamicEvery: 1 },
  });
}

async function jobsIn(sk: SidekiqContext, queue: string) {
  return (await sk.redis.lrange(`queue:${queue}`, 0, -1)).map(
    (raw) => [raw, JSON.parse(raw) as { class: string; args: unknown[]; queue: string; retry: unknown }] as const,
  );
}

const utc = (ms: number) => new Date(ms).toISOString().replace("T", " ").slice(0, 19) + " +0000";

describeEachSidekiq("sidekiq-scheduler: the Node scheduler with the real gem", (sk) => {
  it("keeps every schedule the gem wrote with no Ruby scheduler, and Ruby's Recurring Jobs tab shows Node's state", async () => {
    const ruby = schedulerRuby(sk);
    const q = "sched-alone";
    const at = utc(Math.ceil(Date.now() / 1000) * 1000 + 8000);
    const base = `"class" => "SchedulerProofJob", "queue" => "${q}"`;
    await ruby(`
      Sidekiq.set_schedule("sec", { "cron" => "* * * * * *", ${base}, "args" => ["sec"] })
      Sidekiq.set_schedule("every", { "every" => "2s", ${base}, "args" => ["every"], "description" => "every two seconds" })
      Sidekiq.set_schedule("interval", { "interval" => "2s", ${base}, "args" => "interval" })
      Sidekiq.set_schedule("in", { "in" => "3s", ${base}, "args" => ["in"] })
      Sidekiq.set_schedule("at", { "at" => "${at}", ${base}, "args" => ["at"] })
      Sidekiq.set_schedule("meta", { "cron" => "*/2 * * * * *", ${base}, "args" => ["meta"], "include_metadata" => true })
      Sidekiq.set_schedule("off", { "cron" => "* * * * * *", ${base}, "args" => ["off"], "enabled" => false })
      true
    `);
    const { logger, lines } = collect();
    const w = nodeWorker(sk, logger);
    await w.start();
    await sleep(10_500);
    await w.stop();
    expect(lines.filter((l) => /^(WARN|ERROR)/.test(l))).toEqual([]);

    const jobs = await jobsIn(sk, q);
    const count = (m: string) => jobs.filter(([, j]) => j.args[0] === m).length;
    expect(count("sec")).toBeGreaterThanOrEqual(6);
    expect(count("every")).toBeGreaterThanOrEqual(3);
    expect(count("interval")).toBeGreaterThanOrEqual(2);
    expect(count("in")).toBe(1);
    expect(count("at")).toBe(1);
    expect(count("meta")).toBeGreaterThanOrEqual(3);
    expect(count("off")).toBe(0);
    // Ruby's Sidekiq::Client.push of the config, less the rufus keys.
    for (const [raw, j] of jobs) {
      expect(j.class).toBe("SchedulerProofJob");
      expect(j.queue).toBe(q);
      expect(j.retry).toBe(true);
      expect(raw).not.toMatch(/"(cron|every|interval|in|at|description|enabled|include_metadata)":/);
    }
    // include_metadata: {"scheduled_at": <the cron fire time, a float>} appended.
    for (const [raw, j] of jobs.filter(([, j]) => j.args[0] === "meta")) {
      expect(raw).toMatch(/"args":\["meta",\{"scheduled_at":\d+\.0\}\]/);
      expect((j.args[1] as { scheduled_at: number }).scheduled_at % 2).toBe(0);
    }
    // One claim per push, in the gem's own set.
    expect(await sk.redis.zcard("sidekiq-scheduler:pushed:sec")).toBe(count("sec"));
    const members = await sk.redis.zrange("sidekiq-scheduler:pushed:sec", 0, -1, "WITHSCORES");
    for (let i = 0; i < members.length; i += 2) expect(members[i]).toBe(members[i + 1]);
    expect(await sk.redis.ttl("sidekiq-scheduler:pushed:sec")).toBeGreaterThan(86_000);
    // last_times and next_times as the gem writes them; a one-time job has no next time once fired.
    const last = await sk.redis.hgetall("sidekiq-scheduler:last_times");
    const next = await sk.redis.hgetall("sidekiq-scheduler:next_times");
    for (const n of ["sec", "every", "interval", "in", "at", "meta", "off"]) expect(last[n]).toMatch(GEM_TIME);
    for (const n of ["sec", "every", "meta", "off"]) expect(next[n]).toMatch(GEM_TIME);
    expect(next.in).toBeUndefined();
    expect(next.at).toBeUndefined();

    // Node disables "every"; Ruby's own scheduler and Web UI read it.
    await new SchedulerApi({ redis: sk.redis }).setEnabled("every", false);
    expect(
      await ruby<boolean[]>(`Sidekiq.reload_schedule!
        [SidekiqScheduler::Scheduler.instance.job_enabled?("every"), SidekiqScheduler::Scheduler.instance.job_enabled?("sec")]`),
    ).toEqual([false, true]);
    const page = await renderRecurringJobs(sk);
    expect(page.status).toBe(200);
    // Sidekiq 8's view (a <section> per job) or the older one (an <li> per job).
    const sections = page.body.split(/<section class="job |<li class="list-group-item /).slice(1);
    const section = (name: string) =>
      sections.find(
        (s) => s.includes(`<div class="job-name">${name}</div>`) || s.includes(`<span class="name">${name}</span>`),
      );
    const disabled = /^(disabled-job|list-group-item-disabled)/;
    for (const n of ["sec", "every", "interval", "in", "at", "meta", "off"]) expect(section(n), n).toBeDefined();
    expect(section("every")).toMatch(disabled);
    expect(section("off")).toMatch(disabled);
    expect(section("sec")).not.toMatch(disabled);
    // Relative times parsed from Node's strings (Sidekiq's <time datetime=...>).
    expect(section("sec")).toMatch(/class="last[-_]time">[^<]*<time[^>]*datetime="/);
    expect(section("sec")).toMatch(/class="next[-_]time[^"]*"[^>]*>[^<]*<time[^>]*datetime="/);
    expect(section("every")).toContain("every two seconds");
  });

  it("a schedule toggled on either side is respected by both schedulers", { timeout: 120_000 }, async () => {
    const q = "sched-toggle";
    const rubyProc = await startRubyScheduler(sk, {
      tog: { cron: "* * * * * *", class: "SchedulerProofJob", queue: q, args: ["tog"] },
    });
    const ruby = schedulerRuby(sk);
    const api = new SchedulerApi({ redis: sk.redis });
    const { logger, lines, pushed, claimed } = collect();
    const w = nodeWorker(sk, logger);
    await w.start();
    const len = () => sk.redis.llen(`queue:${q}`);
    /** Pushes by anyone, and Node's claims, during `ms` once the toggle has settled. */
    const quietFor = async (ms: number) => {
      await sleep(1500); // a trigger under way when the toggle landed may still push
      const [before, nodeBefore] = [await len(), claimed.length];
      await sleep(ms);
      return [(await len()) - before, claimed.length - nodeBefore];
    };
    const flowing = async () => {
      const before = await len();
      await sleep(4000);
      return (await len()) - before;
    };
    try {
      // Both schedulers are running once Node has claimed and Ruby has pushed a second Node did not.
      await waitFor("a claim from each scheduler", async () => {
        const claims = await sk.redis.zrange("sidekiq-scheduler:pushed:tog", 0, -1);
        return claimed.length > 0 && claims.some((c) => !pushed.includes(c));
      });
      expect(await flowing()).toBeGreaterThanOrEqual(3);
      // Off from Ruby (the Web UI's toggle): no push, and Node claims nothing.
      await ruby(`Sidekiq.reload_schedule!; SidekiqScheduler::Scheduler.instance.toggle_job_enabled("tog"); true`);
      expect(await sk.redis.hget("sidekiq-scheduler:states", "tog")).toBe('{"enabled":false}');
      expect(await quietFor(4000)).toEqual([0, 0]);
      // On from Node: pushes again, and Node claims again (winning or losing each second to Ruby).
      const nodeBefore = claimed.length;
      await api.setEnabled("tog", true);
      expect(await sk.redis.hget("sidekiq-scheduler:states", "tog")).toBe('{"enabled":true}');
      expect(await flowing()).toBeGreaterThanOrEqual(3);
      expect(claimed.length).toBeGreaterThan(nodeBefore);
      // Off from Node: no push from Ruby either, and Node claims nothing.
      await api.setEnabled("tog", false);
      expect(await quietFor(4000)).toEqual([0, 0]);
    } finally {
      await Promise.all([w.stop(), rubyProc.stop()]);
    }
    expect(lines.filter((l) => /^(WARN|ERROR)/.test(l))).toEqual([]);
    // Every push has its own claim: none was pushed twice.
    const claims = await sk.redis.zcard("sidekiq-scheduler:pushed:tog");
    expect(await len()).toBe(claims);
  });

  it("reads durations, points in time and zoned cron lines as fugit and et-orbi do", async () => {
    const durations = [
      "2s",
      "1m10s",
      "1h",
      "1w2d",
      "1M",
      "1y",
      "30",
      "0.5",
      "1.5h",
      "2 hours",
      "10 minutes",
      "1h 30m",
      "-1h",
      "PT5M",
      "P1DT2H",
      "soon",
      "5x",
      "",
    ];
    const ruby = await schedulerRuby(sk)<Array<number | null>>(
      `${JSON.stringify(durations)}.map { |s| d = Fugit::Duration.parse(s); d && d.to_sec }`,
    );
    expect(durations.map((d) => parseDuration(d))).toEqual(ruby);
    const points = [
      "2026-12-01 18:00:00 +0100",
      "2026/12/01 18:00 UTC",
      "2026-12-01 18:00:00 Europe/Paris",
      "2026-07-01 18:00:00 America/New_York",
    ];
    expect(points.map((p) => parsePointInTime(p) / 1000)).toEqual(
      await schedulerRuby(sk)<number[]>(`${JSON.stringify(points)}.map { |s| ::EtOrbi::EoTime.parse(s).to_i }`),
    );
    // A cron line's next time, written as the gem writes it: et-orbi's to_s in the process's zone, whatever the line's.
    // Both from the same instant (EoTime.now is EoTime.new(Time.now.to_f, nil)): Ruby's own
    // clock, read seconds later, could pass a boundary of */5 first.
    const lines = ["0 9 * * * America/New_York", "30 2 * * 1-5 Asia/Kolkata", "*/5 * * * *", "0 0 1 * * Europe/Paris"];
    const now = Date.now();
    const node = lines.map((l) => {
      const t = timingFor("cron", l, now)!;
      return formatEoTime(t.next!);
    });
    expect(node).toEqual(
      await schedulerRuby(sk)<string[]>(
        `now = ::EtOrbi::EoTime.new(${now / 1000}, nil); ${JSON.stringify(lines)}.map { |l| Fugit::Cron.parse(l).next_time(now).to_s }`,
      ),
    );
  });

  it("an ActiveJob class registered on the worker is enqueued through ActiveJob, and Ruby performs it", async () => {
    const q = "sched-aj";
    await schedulerRuby(sk)(`
      Sidekiq.set_schedule("aj", { "every" => "1s", "class" => "AjRecordJob", "queue" => "${q}", "args" => ["aj", { "k" => 1 }] })
      Sidekiq.set_schedule("aj-kw", { "in" => "1s", "class" => "AjRecordJob", "queue" => "${q}", "args" => { "k" => 2 }, "keyword_argument" => true })
      true
    `);
    const { logger, lines } = collect();
    const w = nodeWorker(sk, logger).registerActiveJob("AjRecordJob", () => {});
    await w.start();
    await sleep(3500);
    await w.stop();
    expect(lines.filter((l) => /^(WARN|ERROR)/.test(l))).toEqual([]);
    const pushed = await sk.redis.llen(`queue:${q}`);
    expect(pushed).toBeGreaterThanOrEqual(3);
    const rubyProc = await sk.startSidekiq({ queues: [q] });
    type Received = { class: string; args_typed: unknown; kw_typed: unknown };
    const received = await waitFor("Ruby to perform every pushed job", async () => {
      const r = (await sk.redis.lrange("bridge:received", 0, -1))
        .map((x) => JSON.parse(x) as Received)
        .filter((x) => x.class === "AjRecordJob");
      return r.length >= pushed && r;
    });
    await rubyProc.stop();
    // keyword_argument: the Hash arrives as keywords (`klass.new(**args)`).
    const kw = received.filter((r) => JSON.stringify(r.kw_typed).includes("Integer"));
    expect(kw).toHaveLength(1);
    expect(kw[0]!.kw_typed).toEqual({ Hash: [[{ Symbol: ":k" }, { Integer: "2" }]] });
    expect(kw[0]!.args_typed).toEqual({ Array: [] });
    for (const r of received.filter((x) => !kw.includes(x)))
      expect(r.args_typed).toEqual({ Array: [{ String: '"aj"' }, { Hash: [[{ String: '"k"' }, { Integer: "1" }]] }] });
  });
});
