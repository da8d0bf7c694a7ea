// The dashboard lists the same entries in the same order as the Ruby Web UI
// of the fleet's release, page by page: Retries and Scheduled soonest first,
// Dead latest first (ties in Redis's member order), Busy's jobs oldest run_at
// first and its processes by hostname in natural order (7.x and 8.x; 6.4.1
// lists them by identity and every running job on one page). Ruby's pages are
// rendered in-process with Rack::MockRequest on the same Redis, and compared
// jid by jid on page 1 and a deep page.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { REPO_ROOT } from "../harness/local-backend.js";
import { type WebServer } from "../src/tools/web/server.js";
import { startWebServer } from "../src/assembly/web.js";
import { describeEachSidekiq, type SidekiqContext } from "./support/harness.js";

const ENTRIES = 70;
const HOSTS = [7, 12, 1, 10, 2, 11, 3, 9, 4, 8, 5, 6];
const JOBS_PER_PROCESS = 11;

/** Ruby's Web UI pages, each rendered with Rack::MockRequest: path -> body. */
async function rubyPages(sk: SidekiqContext, paths: string[]): Promise<Record<string, string>> {
  return sk.ruby(`
    require "sidekiq/web"
    require "rack/mock"
    app = Rack::MockRequest.new(Sidekiq::Web.new)
    ${JSON.stringify(paths)}.to_h do |path|
      res = app.get(path, "rack.session" => {})
      body = res.body.to_s.force_encoding("UTF-8").scrub
      raise "#{path}: HTTP #{res.status}: #{body[0, 300]}" unless res.status == 200
      [path, body]
    end
  `);
}

/** The jids of a sorted-set page, from its checkboxes (`key[]` in Ruby, `key` here: "<score>-<jid>"). */
function setJids(body: string): string[] {
  return [...body.matchAll(/name=["']key(?:\[\])?["'] value=["'][^"']*?-([a-z]\w+)["']/g)].map((m) => m[1]!);
}

/** Busy's job jids (all start "bj") and process names ("host-N:pid", not an identity "host-N:pid:nonce"), in page order. */
function busyJids(body: string): string[] {
  return [...body.matchAll(/\bbj[0-9a-f]{22}\b/g)].map((m) => m[0]).filter((j, i, a) => a.indexOf(j) === i);
}
function busyHosts(body: string): number[] {
  return [...body.matchAll(/\bhost-(\d+):\d+(?![:\d])/g)].map((m) => Number(m[1]));
}

describeEachSidekiq("web dashboard lists pages in the order of Ruby's Web UI", (sk) => {
  let web: WebServer;

  beforeAll(async () => {
    // Written by Ruby: the three sets (a few equal scores, where Redis orders by member),
    // and a fleet of processes with running jobs in this release's own work-hash format.
    await sk.ruby(`
      now = Time.now.to_f.round
      jid = ->(p, i) { p + format("%022x", i * 7919) }
      job = ->(p, i, extra = {}) { {"class" => "OrderJob#{i % 3}", "args" => [i], "queue" => "order", "jid" => jid.(p, i), "retry" => true}.merge(extra) }
      Sidekiq.redis do |c|
        ${ENTRIES}.times do |i|
          c.zadd("retry", (now + 100 + (i / 2) * 10).to_f, Sidekiq.dump_json(job.("rt", i, "retry_count" => i % 5, "error_class" => "E", "error_message" => "m", "failed_at" => now)))
          c.zadd("schedule", (now + 3600 + i * 37 % ${ENTRIES}).to_f, Sidekiq.dump_json(job.("sc", i)))
          c.zadd("dead", (now - 1000 + (i / 3)).to_f, Sidekiq.dump_json(job.("dd", i, "error_class" => "E", "error_message" => "m", "failed_at" => now)))
        end
        six = Sidekiq::VERSION.start_with?("6.")
        ${JSON.stringify(HOSTS)}.each_with_index do |h, n|
          id = "host-#{h}:#{1000 + n}:#{format("%06x", n * 977)}"
          info = {"hostname" => "host-#{h}", "started_at" => now - 600, "pid" => 1000 + n, "tag" => "order",
                  "concurrency" => 20, "queues" => ["order"], "labels" => [], "identity" => id, "version" => Sidekiq::VERSION}
          info["capsules"] = {"default" => {"concurrency" => 20, "mode" => "strict", "weights" => {"order" => 0}}} if Sidekiq::VERSION >= "8"
          c.sadd("processes", id)
          c.hset(id, "info", Sidekiq.dump_json(info), "busy", ${JOBS_PER_PROCESS}, "beat", Time.now.to_f, "quiet", "false", "rss", 1000 + n, "rtt_us", 100, "concurrency", 20)
          c.expire(id, 600)
          ${JOBS_PER_PROCESS}.times do |t|
            i = n * ${JOBS_PER_PROCESS} + t
            payload = job.("bj", i)
            work = {"queue" => "order", "payload" => six ? payload : Sidekiq.dump_json(payload), "run_at" => now - 500 + (i * 53 % ${HOSTS.length * JOBS_PER_PROCESS})}
            c.hset("#{id}:#{six ? "workers" : "work"}", "tid#{t}", Sidekiq.dump_json(work))
          end
        end
      end
      true
    `);
    web = await startWebServer({ redis: sk.url, port: 0, apiOptions: { apiVersion: sk.target.version } });
  }, 120_000);

  afterAll(async () => {
    await web?.close();
  });

  async function ours(path: string): Promise<string> {
    const res = await fetch(`${web.url}${path.slice(1)}`);
    const body = await res.text();
    expect(res.status, `${path}: ${body.slice(0, 300)}`).toBe(200);
    return body;
  }

  it("Retries, Scheduled and Dead: the same jids on page 1, a deep page and past the end", async () => {
    const paths = ["retries", "scheduled", "morgue"].flatMap((p) => [
      `/${p}`,
      `/${p}?page=3`,
      `/${p}?page=4&count=20`,
      `/${p}?page=9&count=10`,
    ]);
    const ruby = await rubyPages(sk, paths);
    for (const path of paths) {
      const want = setJids(ruby[path]!);
      const got = setJids(await ours(path));
      expect(got, path).toEqual(want);
      if (!path.includes("page=9")) expect(want.length, path).toBeGreaterThan(0);
    }
    // The orders themselves, so a page both sides got wrong the same way still fails.
    const first = (p: string) => setJids(ruby[p]!)[0];
    expect(first("/retries")).toBe(`rt${(0).toString(16).padStart(22, "0")}`);
    expect(first("/morgue")).toMatch(/^dd/);
    expect(setJids(ruby["/morgue"]!).slice(0, 3).sort()).toEqual(
      [69, 68, 67].map((i) => `dd${(i * 7919).toString(16).padStart(22, "0")}`).sort(),
    );
  }, 120_000);

  it("Busy: the same running jobs on each page, oldest first, and the processes in Ruby's order", async () => {
    const seven = sk.target.dialect >= 7;
    const paths = seven ? ["/busy", "/busy?page=2"] : ["/busy"];
    const ruby = await rubyPages(sk, paths);
    const total = HOSTS.length * JOBS_PER_PROCESS;
    const rubyAll = paths.flatMap((p) => busyJids(ruby[p]!));
    expect(rubyAll).toHaveLength(total);
    // Ours pages by 100 on every release (6.4.1 shows them all on one page).
    const mine = [...busyJids(await ours("/busy")), ...busyJids(await ours("/busy?page=2"))];
    expect(mine).toEqual(rubyAll);
    expect(busyJids(await ours("/busy?page=2&count=50"))).toEqual(rubyAll.slice(50, 100));
    // The CLI lists them in the same order, a page at a time.
    const cli = spawnSync(
      process.execPath,
      [join(REPO_ROOT, "dist/assembly/main.js"), "processes", "--work", "--limit", "40", "--offset", "90", "--json"],
      { env: { ...process.env, REDIS_URL: sk.url }, encoding: "utf8" },
    );
    expect(cli.status, cli.stderr).toBe(0);
    const listed = JSON.parse(cli.stdout) as { work: Array<{ jid: string }>; work_total: number };
    expect(listed.work.map((w) => w.jid)).toEqual(rubyAll.slice(90, 130));
    expect(listed.work_total).toBe(total);
    expect(busyHosts(await ours("/busy?only=processes"))).toEqual(busyHosts(ruby["/busy"]!));
    expect(busyHosts(ruby["/busy"]!)).toEqual(
      // 6.4.1: identities bytewise, and ":" sorts after the digits ("host-10:" before "host-1:").
      seven ? [...HOSTS].sort((a, b) => a - b) : [...HOSTS].sort((a, b) => (`${a}:` < `${b}:` ? -1 : 1)),
    );
    if (sk.target.version >= "8.1.6") {
      const only = await rubyPages(sk, ["/busy?only=jobs", "/busy?only=processes"]);
      expect(busyHosts(only["/busy?only=jobs"]!)).toEqual([]);
      expect(busyHosts(await ours("/busy?only=jobs"))).toEqual([]);
      expect(busyJids(only["/busy?only=processes"]!)).toEqual([]);
      expect(busyJids(await ours("/busy?only=processes"))).toEqual([]);
    }
  }, 120_000);
});
