// sidekiq-cron's keys, both ways: what Node's CronApi writes is what the real
// gem (2.3.1, with fugit and cronex) writes for the same job, Ruby's
// Sidekiq::Cron::Job API and its Web UI tab read it, and Node reads, enables,
// disables, destroys and enqueues what Ruby wrote. sidekiq-cron 2.3 needs Ruby
// 3.3: Sidekiq 7.3.2 (trixie) and 8.1.7 (forky).
import { afterAll, beforeAll, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { CronApi, type CronJobInput } from "../src/addons/sidekiq-cron/index.js";
import { cronRuby } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";
import { between } from "./support/between.js";

// Jobs both sides create, for classes neither process has loaded.
const INPUTS: Array<Omit<CronJobInput, "name">> = [
  { cron: "*/5 * * * *", class: "NotLoadedJob" },
  {
    cron: "0 3 * * *",
    class: "Billing::NotLoadedJob",
    args: [1, "two", { k: "é ✓" }, 12345678901234567890n as unknown as number, 1.5, null],
    queue: "low",
    retry: 3,
    description: "nightly invoices",
  },
  {
    cron: "30 * * * * *",
    class: "NotLoadedJob",
    args: { a: 1 },
    retry: false,
    date_as_argument: true,
    status: "disabled",
  },
  {
    cron: "@hourly",
    class: "NotLoadedAjJob",
    active_job: true,
    queue_name_prefix: "app",
    queue: "mail",
    symbolize_args: true,
    args: [{ x: 1 }],
  },
  { cron: "0 9 * * mon-fri Europe/Berlin", class: "NotLoadedJob", namespace: "reports", source: "schedule" },
  {
    cron: "*/10 * * * *",
    class: "NotLoadedJob",
    message: '{"class":"NotLoadedJob","queue":"m","args":[],"backtrace":true}',
  },
  { cron: "0 0 L * *", class: "NotLoadedJob", args: "[1,2]", retry: true, queue_name_delimiter: "." },
];

/** The input as Ruby receives it (JSON; big integers as Ruby Integers). */
function rubyInput(input: Omit<CronJobInput, "name">, name: string): string {
  return JSON.stringify({ ...input, name }, (_k, v: unknown) => (typeof v === "bigint" ? `__BIG__${v}` : v)).replace(
    /"__BIG__(\d+)"/g,
    "$1",
  );
}

describeEachSidekiq(
  "cron: sidekiq-cron's keys, Node and the real gem",
  (sk) => {
    let ruby: <T>(code: string) => Promise<T>;
    let api: CronApi;
    let client: Client;
    beforeAll(() => {
      ruby = cronRuby(sk);
      client = new Client({ redis: sk.url, dialect: sk.target.version });
      api = new CronApi({ redis: sk.redis, client });
    });
    afterAll(async () => {
      await client.close();
    });

    it("Node writes the same hash and :enqueued entry as the gem for the same job", async () => {
      for (const [i, input] of INPUTS.entries()) await api.create({ ...input, name: `n-${i}` });
      const created = await ruby<boolean[]>(
        `[${INPUTS.map((inp, i) => `Sidekiq::Cron::Job.create(JSON.parse(${JSON.stringify(rubyInput(inp, `r-${i}`))}))`).join(", ")}]`,
      );
      expect(created).toEqual(INPUTS.map(() => true));
      for (const [i, input] of INPUTS.entries()) {
        const ns = input.namespace ?? "default";
        const node = await sk.redis.hgetall(`cron_job:${ns}:n-${i}`);
        const rb = await sk.redis.hgetall(`cron_job:${ns}:r-${i}`);
        expect({ ...node, name: "x" }, `job ${i}: ${input.cron}`).toEqual({ ...rb, name: "x" });
        expect(Object.keys(node).sort()).toEqual(Object.keys(rb).sort());
        expect(await sk.redis.sismember(`cron_jobs:${ns}`, `cron_job:${ns}:n-${i}`)).toBe(1);
        const [nMember, nScore] = await sk.redis.zrange(`cron_job:${ns}:n-${i}:enqueued`, 0, -1, "WITHSCORES");
        const [rMember, rScore] = await sk.redis.zrange(`cron_job:${ns}:r-${i}:enqueued`, 0, -1, "WITHSCORES");
        expect(nMember).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        // The same fire time unless a minute (or second) boundary fell between the two saves.
        expect(Math.abs(Date.parse(nMember!) - Date.parse(rMember!))).toBeLessThanOrEqual(60 * 60_000);
        expect(Math.abs(Number(nScore) - Number(rScore))).toBeLessThan(120);
      }
    });

    it("Ruby's Job.all, find, count and the Web UI's Cron tab read what Node wrote", async () => {
      const seen = await ruby<{
        all: Array<Record<string, unknown>>;
        count: number;
        find: Record<string, unknown>;
        reports: string[];
      }>(`
        all = Sidekiq::Cron::Job.all("*").select { |j| j.name.start_with?("n-") }.sort_by(&:name)
        f = Sidekiq::Cron::Job.find("n-1")
        {
          "all" => all.map { |j| j.to_hash.merge(valid: j.valid?, queue: j.instance_variable_get(:@queue), human: j.human_cron, enabled: j.enabled?, parsed_args: j.args) },
          "count" => Sidekiq::Cron::Job.count("*"),
          "find" => {"name" => f.name, "klass" => f.klass, "args" => JSON.generate(f.args), "cron" => f.cron, "description" => f.description, "valid" => f.valid?},
          "reports" => Sidekiq::Cron::Job.all("reports").map(&:name).sort
        }
      `);
      expect(seen.all.map((j) => j.name)).toEqual(INPUTS.map((_, i) => `n-${i}`));
      for (const [i, j] of seen.all.entries()) {
        expect(j.valid, `n-${i}`).toBe(true);
        expect(j.cron).toBe(INPUTS[i]!.cron);
      }
      expect(seen.all[2]!.enabled).toBe(false);
      expect(seen.all[1]!.queue).toBe("low");
      expect(seen.all[1]!.human).toBe("At 3:00 AM");
      expect(seen.count).toBe(2 * INPUTS.length);
      expect(seen.find).toEqual({
        name: "n-1",
        klass: "Billing::NotLoadedJob",
        args: '[1,"two",{"k":"é ✓"},12345678901234567890,1.5,null]',
        cron: "0 3 * * *",
        description: "nightly invoices",
        valid: true,
      });
      expect(seen.reports).toEqual(["n-4", "r-4"]);

      const page = await ruby<{ status: number; body: string; show: number; showBody: string }>(`
        require "sidekiq/web"
        require "sidekiq/cron/web"
        require "rack/mock"
        app = Sidekiq::Web.new
        res = Rack::MockRequest.new(app).get("/cron", "rack.session" => {})
        show = Rack::MockRequest.new(app).get("/cron/namespaces/default/jobs/n-1", "rack.session" => {})
        {"status" => res.status, "body" => res.body.to_s.force_encoding("UTF-8").scrub,
         "show" => show.status, "showBody" => show.body.to_s.force_encoding("UTF-8").scrub}
      `);
      expect(page.status).toBe(200);
      for (const i of [0, 1, 2, 3, 5, 6]) expect(page.body).toContain(`n-${i}`);
      expect(page.body).toContain("nightly invoices");
      expect(page.show).toBe(200);
      expect(page.showBody).toContain("Billing::NotLoadedJob");
    });

    it("Node reads what Ruby wrote, losslessly, and each side sees the other's enable, disable and destroy", async () => {
      const { jobs, unreadable } = await api.list("*");
      expect(unreadable).toEqual([]);
      for (const [i, input] of INPUTS.entries()) {
        const ns = input.namespace ?? "default";
        const job = jobs.find((j) => j.name === `r-${i}`)!;
        expect(job.errors()).toEqual([]);
        // Read and written back unchanged: what enable/disable re-save is what Ruby stored.
        expect(job.toHash()).toEqual(await sk.redis.hgetall(`cron_job:${ns}:r-${i}`));
      }
      expect((await api.find("r-1"))!.queue).toBe("low");
      expect(await api.count("*")).toBe(2 * INPUTS.length);

      await api.disable("r-0");
      await api.enable("r-2");
      expect(await api.destroy("r-6")).toBe(true);
      const afterNode = await ruby<Record<string, unknown>>(`
        {"r0" => Sidekiq::Cron::Job.find("r-0").status, "r2" => Sidekiq::Cron::Job.find("r-2").status,
         "r6" => Sidekiq::Cron::Job.find("r-6").nil?, "r6set" => Sidekiq.redis { |c| c.sismember("cron_jobs:default", "cron_job:default:r-6") } == 1,
         "r6keys" => Sidekiq.redis { |c| c.exists("cron_job:default:r-6", "cron_job:default:r-6:enqueued", "cron_job:default:r-6:jid_history") }}
      `);
      expect(afterNode).toEqual({ r0: "disabled", r2: "enabled", r6: true, r6set: false, r6keys: 0 });

      await ruby(
        `Sidekiq::Cron::Job.find("n-0").disable!; Sidekiq::Cron::Job.find("n-2").enable!; Sidekiq::Cron::Job.destroy("n-6"); true`,
      );
      expect((await api.find("n-0"))!.status).toBe("disabled");
      expect((await api.find("n-2"))!.status).toBe("enabled");
      expect(await api.find("n-6")).toBeUndefined();
      expect(await sk.redis.exists("cron_job:default:n-6:enqueued")).toBe(0);
    });

    it("enqueue: Node pushes the payload, last_enqueue_time and jid_history Ruby's enqueue! writes", async () => {
      const rb = await ruby<{ jid: string; payload: string; last: string; history: string[] }>(`
        j = Sidekiq::Cron::Job.find("r-1")
        j.enqueue!
        Sidekiq.redis do |c|
          {"payload" => c.lrange("queue:low", 0, 0).first, "last" => c.hget("cron_job:default:r-1", "last_enqueue_time"),
           "history" => c.lrange("cron_job:default:r-1:jid_history", 0, -1)}
        end
      `);
      const jid = await api.enqueue("n-1");
      const nodePayload = (await sk.redis.lrange("queue:low", 0, 0))[0]!;
      const strip = (s: string) =>
        s.replace(/"jid":"[0-9a-f]{24}"/, '"jid":"J"').replace(/"(created_at|enqueued_at)":[0-9.]+/g, '"$1":T');
      expect(strip(nodePayload)).toBe(strip(rb.payload));
      expect(nodePayload).toContain(`"jid":"${jid}"`);
      const last = await sk.redis.hget("cron_job:default:n-1", "last_enqueue_time");
      expect(last).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000$/);
      expect(rb.last).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000$/);
      const history = await sk.redis.lrange("cron_job:default:n-1:jid_history", 0, -1);
      expect(history).toHaveLength(1);
      const shape = (s: string) => s.replace(/[0-9a-f]{24}/, "J").replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/, "T");
      expect(shape(history[0]!)).toBe(shape(rb.history[0]!));
      // Ruby reads Node's history and time.
      const seen = await ruby<{ history: unknown[]; last: string }>(`
        j = Sidekiq::Cron::Job.find("n-1")
        {"history" => j.jid_history_from_redis, "last" => j.last_enqueue_time.utc.iso8601}
      `);
      expect(seen.history).toEqual([{ jid, enqueued: JSON.parse(history[0]!).enqueued }]);
      expect(seen.last.replace("T", " ").replace("Z", " +0000")).toBe(last);

      // date_as_argument: the same float appended; Ruby's Time.now.to_f.
      await api.enable("n-2");
      const t0 = Date.now() / 1000;
      await api.enqueue("n-2");
      const t1 = Date.now() / 1000;
      const withDate = JSON.parse((await sk.redis.lrange("queue:default", 0, 0))[0]!) as { args: unknown[] };
      expect(withDate.args[0]).toEqual({ a: 1 });
      expect(typeof withDate.args[1]).toBe("number");
      between(withDate.args[1] as number, t0, t1, "date_as_argument", 0.002);
    });

    it("sidekiq-cron 1.x's un-namespaced jobs: Node moves them as the gem's poller does at start", async () => {
      await sk.redis.hset("cron_job:legacy-1", {
        name: "legacy-1",
        klass: "NotLoadedJob",
        cron: "*/15 * * * *",
        args: "[7]",
        message: '{"queue":"old","class":"NotLoadedJob","args":[7]}',
        status: "enabled",
      });
      await sk.redis.sadd("cron_jobs", "cron_job:legacy-1");
      const { moved } = await api.migrateLegacyJobs();
      expect(moved).toEqual(["legacy-1"]);
      expect(await sk.redis.scard("cron_jobs")).toBe(0);
      const seen = await ruby<Record<string, unknown>>(`
        j = Sidekiq::Cron::Job.find("legacy-1")
        {"ns" => j.namespace, "args" => j.args, "queue" => j.instance_variable_get(:@queue), "valid" => j.valid?}
      `);
      expect(seen).toEqual({ ns: "default", args: [7], queue: "old", valid: true });
    });
  },
  (t) => t.dialect !== 6,
);
