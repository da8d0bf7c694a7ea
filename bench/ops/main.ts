// `npm run bench:ops`: the dashboard, the CLI and a bulk retry at operator
// scale, side by side with Sidekiq 8.1.7's own Web UI and API on the same
// Redis. Seeds 1,000,000 retries, 100,000 dead and scheduled, 500 queues of
// 1,000 jobs and 2,000 processes running 20,000 jobs (then 10,000 processes)
// in Sidekiq 8.1.7's exact format, measures each page and command on both
// sides, and writes bench/results/ops.md. Needs root (the Ruby side runs in
// the interop tests' forky root filesystem).
//
//   OPS_SCALE=0.1   every count times 0.1 (a quick run; 1 is the full scale)
//   OPS_RUNS=5      measured runs per page or command (after one warm-up)
//   OPS_RUBY_BUDGET_S=30  at most this long on one of Ruby's pages (at least one run)
//   OPS_BULK=0      skip the retry-all comparison (it moves every retry, then reseeds)
//   OPS_OUT=path    where the report goes (default bench/results/ops.md; "-" prints only)
//   OPS_ONLY=busy   only Busy at 2,000 processes, in rounds, with an A/B (busy-ab.ts: OPS_ROUNDS, OPS_COMPARE_DIST)
//   OPS_COMPARE_DIST=<dir>  also every page from a second dashboard built from another tree, timed
//                   page by page beside ours (an A/B of a change: "compare ms")
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpus, totalmem } from "node:os";
import { Redis } from "ioredis";
import { startRedis } from "../../harness/redis-server.js";
import { clearProcesses, className, fleetSize, seedFleet, seedProcesses, seedRetries } from "./seed.js";
import { SidekiqApi } from "../../src/core/api/sidekiq-api.js";
import { buildDist, Dashboard, redisWork, REPO, RubySide, timeCli, type RubyOut, type Timing } from "./sides.js";
import { bulkRetryAll, type BulkFigures } from "./bulk.js";
import { busyOnly } from "./busy-ab.js";

const SCALE = Number(process.env.OPS_SCALE ?? 1);
const RUNS = Number(process.env.OPS_RUNS ?? 5);
const RUBY_BUDGET_S = Number(process.env.OPS_RUBY_BUDGET_S ?? 30);
const BULK = process.env.OPS_BULK !== "0";
const OUT = process.env.OPS_OUT ?? join(REPO, "bench/results/ops.md");
const COMPARE_DIST = process.env.OPS_COMPARE_DIST;

const PAGE_TARGET_MS = 300;
const BUSY_TARGET_MS = 100;
const RATIO_TARGET = 10;
const RSS_TARGET_MB = 150;

interface Row {
  what: string;
  ours?: Timing;
  /** The same call through our API in this process (like Ruby's column). */
  api?: Timing;
  ruby?: Timing;
  /** The same page from OPS_COMPARE_DIST's dashboard, timed right after ours. */
  compare?: Timing;
  /** Ours is a first page where Ruby renders everything (Busy, filters): the ≥ 10× target applies. */
  tenX?: boolean;
  target?: number;
}

const fmtMs = (t?: Timing) => (t ? t.median_ms.toFixed(t.median_ms < 10 ? 1 : 0) : "–");
const fmtKb = (b?: number) =>
  b === undefined ? "" : b > 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${Math.round(b / 1000)} kB`;
const fmtWork = (t?: Timing) =>
  t ? `${t.work.calls.toLocaleString("en-US")} / ${(t.work.usec / 1000).toFixed(1)} ms` : "–";

function verdict(r: Row): string {
  const out: string[] = [];
  if (r.ours && r.target !== undefined)
    out.push(r.ours.median_ms <= r.target ? `≤ ${r.target} ms ok` : `> ${r.target} ms MISSED`);
  const mine = r.api ?? r.ours;
  if (mine && r.ruby) {
    const ratio = r.ruby.median_ms / mine.median_ms;
    out.push(`${ratio.toFixed(1)}×${r.tenX ? (ratio >= RATIO_TARGET ? " (≥ 10× ok)" : " (≥ 10× MISSED)") : ""}`);
  }
  return out.join(", ");
}

function table(title: string, rows: Row[], columns: "page" | "cli"): string {
  const ab = rows.some((r) => r.compare);
  const head =
    columns === "page"
      ? `| page | ours ms |${ab ? " compare ms |" : ""} Ruby ms | ours bytes | Ruby bytes | Redis calls / time, ours | Redis calls / time, Ruby | verdict |\n|---|---:|${ab ? "---:|" : ""}---:|---:|---:|---:|---:|---|`
      : "| command | ours, CLI ms (whole process) | ours, API ms (in-process) | Ruby, API ms (in-process) | CLI peak RSS | Redis calls / time, ours | Redis calls / time, Ruby | Ruby ÷ our API |\n|---|---:|---:|---:|---:|---:|---:|---|";
  const lines = rows.map((r) =>
    columns === "page"
      ? `| \`${r.what}\` | ${fmtMs(r.ours)} |${ab ? ` ${fmtMs(r.compare)} |` : ""} ${fmtMs(r.ruby)} | ${fmtKb(r.ours?.bytes)} | ${fmtKb(r.ruby?.bytes)} | ${fmtWork(r.ours)} | ${fmtWork(r.ruby)} | ${verdict(r)} |`
      : `| \`${r.what}\` | ${fmtMs(r.ours)} | ${fmtMs(r.api)} | ${fmtMs(r.ruby)} | ${r.ours?.rss_kb ? `${Math.round(r.ours.rss_kb / 1024)} MB` : "–"} | ${fmtWork(r.ours)} | ${fmtWork(r.ruby)} | ${verdict(r)} |`,
  );
  return `### ${title}\n\n${head}\n${lines.join("\n")}\n`;
}

async function measurePages(
  dashes: { ours: Dashboard; compare?: Dashboard },
  redis: Redis,
  ruby: RubySide,
  url: string,
  pages: Array<{ path: string; rubyPath?: string; tenX?: boolean; target?: number }>,
): Promise<{ rows: Row[]; rubyRss: number }> {
  const rows: Row[] = [];
  for (const p of pages) {
    const ours = await dashes.ours.time(redis, p.path, RUNS);
    const compare = await dashes.compare?.time(redis, p.path, RUNS);
    console.log(
      `  ours ${p.path}: ${fmtMs(ours)} ms, ${fmtKb(ours.bytes)}, Redis ${fmtWork(ours)}${compare ? `; compare ${fmtMs(compare)} ms` : ""}`,
    );
    rows.push({ what: p.path, ours, compare, tenX: p.tenX, target: p.target ?? PAGE_TARGET_MS });
  }
  const rubyPaths = [...new Set(pages.flatMap((p) => (p.rubyPath ? [p.rubyPath] : [])))];
  const r = await ruby.run(url, {
    OPS_MODE: "pages",
    OPS_PATHS: JSON.stringify(rubyPaths),
    OPS_RUNS: String(RUNS),
    OPS_PAGE_BUDGET_S: String(RUBY_BUDGET_S),
  });
  pages.forEach((p, i) => {
    if (p.rubyPath) rows[i]!.ruby = r.pages![p.rubyPath];
  });
  for (const path of rubyPaths) {
    const t = r.pages![path]!;
    console.log(`  Ruby ${path}: ${fmtMs(t)} ms (${t.runs} runs), ${fmtKb(t.bytes)}, Redis ${fmtWork(t)}`);
  }
  return { rows, rubyRss: r.peak_rss_kb };
}

/** Median ms of `runs` calls (after a warm-up, whose Redis work is reported). */
async function timeCall(redis: Redis, fn: () => Promise<unknown>): Promise<Timing> {
  const { work } = await redisWork(redis, fn);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median_ms: times[Math.floor(times.length / 2)]!, runs: RUNS, work };
}

async function measureCli(
  redis: Redis,
  url: string,
  ruby: RubySide,
  commands: Array<{ args: string[]; rubyName?: string; api?: (api: SidekiqApi) => Promise<unknown> }>,
): Promise<{ rows: Row[]; rubyRss: number }> {
  const rows: Row[] = [];
  const api = new SidekiqApi({ redis: url, apiVersion: "8.1.7" });
  try {
    for (const c of commands) {
      const ours = await timeCli(redis, url, c.args, RUNS);
      const viaApi = c.api ? await timeCall(redis, () => c.api!(api)) : undefined;
      console.log(
        `  ours sidekiq-bridge ${c.args.join(" ")}: ${fmtMs(ours)} ms, ${Math.round(ours.rss_kb! / 1024)} MB; API ${fmtMs(viaApi)} ms`,
      );
      rows.push({ what: `sidekiq-bridge ${c.args.join(" ")}`, ours, api: viaApi });
    }
  } finally {
    await api.close();
  }
  const r: RubyOut = await ruby.run(url, {
    OPS_MODE: "api",
    OPS_CLASS: className(7),
    OPS_RUNS: String(RUNS),
    OPS_PAGE_BUDGET_S: String(RUBY_BUDGET_S),
  });
  commands.forEach((c, i) => {
    if (c.rubyName) rows[i]!.ruby = r.api![c.rubyName];
  });
  return { rows, rubyRss: r.peak_rss_kb };
}

/** OPS_ONLY=busy: Busy's rows alone (busy-ab.ts); the report goes to OPS_OUT if given, else only to the console. */
async function busyMain(): Promise<void> {
  buildDist();
  const server = await startRedis({ databases: 1 });
  const redis = new Redis(server.url);
  const ruby = await RubySide.prepare();
  try {
    const text = await busyOnly(redis, server.url, ruby, {
      scale: SCALE,
      runs: RUNS,
      rounds: Number(process.env.OPS_ROUNDS ?? 3),
      rubyBudgetS: RUBY_BUDGET_S,
      compareDist: COMPARE_DIST,
    });
    console.log(`\n${text}`);
    if (process.env.OPS_OUT && process.env.OPS_OUT !== "-") writeFileSync(process.env.OPS_OUT, text);
  } finally {
    redis.disconnect();
    await server.stop();
    ruby.cleanup();
  }
}

async function main(): Promise<void> {
  const size = fleetSize(SCALE);
  const wide = fleetSize(SCALE, 10_000).processes;
  console.log(`bench:ops at scale ${SCALE}: ${JSON.stringify(size)}; then ${wide} processes`);
  buildDist();
  const server = await startRedis({ databases: 1 });
  const redis = new Redis(server.url);
  const ruby = await RubySide.prepare();
  const report: string[] = [];
  const rss: Array<[string, number]> = [];
  try {
    const t = performance.now();
    await seedFleet(redis, size);
    const seedS = (performance.now() - t) / 1000;
    const mem = /used_memory_human:(\S+)/.exec(await redis.info("memory"))?.[1];
    console.log(`seeded in ${seedS.toFixed(1)} s (Redis ${mem})`);

    const cls = encodeURIComponent(className(7));
    const deep = (n: number) => Math.max(1, Math.floor(n / 25 / 2));
    const last = (n: number) => Math.max(1, Math.ceil(n / 25));
    const pages = [
      { path: "/", rubyPath: "/" },
      { path: "/busy", rubyPath: "/busy", tenX: true, target: BUSY_TARGET_MS },
      { path: "/busy?only=jobs", rubyPath: "/busy?only=jobs", tenX: true, target: BUSY_TARGET_MS },
      { path: "/busy?only=processes", rubyPath: "/busy?only=processes", tenX: true, target: BUSY_TARGET_MS },
      { path: `/busy?class=${cls}`, rubyPath: "/busy", tenX: true },
      { path: `/busy?host=worker-7.ops.internal`, rubyPath: "/busy", tenX: true },
      { path: "/queues", rubyPath: "/queues" },
      { path: "/queues/q-1", rubyPath: "/queues/q-1" },
      { path: "/queues/q-1?page=40", rubyPath: "/queues/q-1?page=40" },
      { path: "/retries", rubyPath: "/retries" },
      { path: "/retries?page=500", rubyPath: "/retries?page=500" },
      { path: `/retries?page=${deep(size.retries)}`, rubyPath: `/retries?page=${deep(size.retries)}` },
      { path: `/retries?page=${last(size.retries)}`, rubyPath: `/retries?page=${last(size.retries)}` },
      { path: `/retries?class=${cls}`, rubyPath: `/retries?substr=${cls}`, tenX: true },
      { path: `/retries?substr=${cls}`, rubyPath: `/retries?substr=${cls}`, tenX: true },
      { path: "/scheduled", rubyPath: "/scheduled" },
      { path: `/scheduled?page=${deep(size.scheduled)}`, rubyPath: `/scheduled?page=${deep(size.scheduled)}` },
      { path: `/scheduled?substr=${cls}`, rubyPath: `/scheduled?substr=${cls}`, tenX: true },
      { path: "/morgue", rubyPath: "/morgue" },
      { path: `/morgue?page=${deep(size.dead)}`, rubyPath: `/morgue?page=${deep(size.dead)}` },
      { path: `/morgue?substr=${cls}`, rubyPath: `/morgue?substr=${cls}`, tenX: true },
    ];
    console.log(`\npages at ${size.processes} processes`);
    const dash = await Dashboard.start(server.url);
    const compare = COMPARE_DIST ? await Dashboard.start(server.url, COMPARE_DIST) : undefined;
    const p1 = await measurePages({ ours: dash, compare }, redis, ruby, server.url, pages);
    rss.push(["dashboard (all pages above)", dash.peakRssKb()], ["Ruby Web UI process (pages above)", p1.rubyRss]);

    console.log("\nCLI and API");
    const cliCommands = [
      { args: ["stats"], rubyName: "stats", api: (a: SidekiqApi) => a.stats() },
      { args: ["processes"], rubyName: "processes", api: (a: SidekiqApi) => a.processes.list() },
      { args: ["processes", "--work"], rubyName: "processes --work", api: (a: SidekiqApi) => a.work() },
      { args: ["retries", "list"], rubyName: "retries list", api: (a: SidekiqApi) => a.retries.page(0, 25) },
      {
        args: ["retries", "list", "--class", className(7)],
        rubyName: "retries list --class",
        api: (a: SidekiqApi) => a.retries.list({ limit: 25, filter: { className: className(7) } }),
      },
      {
        args: ["dead", "list", "--offset", String(Math.floor(size.dead / 2))],
        api: (a: SidekiqApi) => a.dead.page(Math.floor(size.dead / 2), 25),
      },
    ];
    const c1 = await measureCli(redis, server.url, ruby, cliCommands);
    rss.push(["Ruby API process (calls above)", c1.rubyRss]);

    console.log(`\n${wide} processes`);
    await clearProcesses(redis);
    await seedProcesses(redis, wide, size.jobsPerProcess, size.queues);
    const widePages = [
      { path: "/busy", rubyPath: "/busy", tenX: true },
      { path: "/busy?only=jobs", rubyPath: "/busy?only=jobs", tenX: true },
      { path: "/busy?only=processes", rubyPath: "/busy?only=processes", tenX: true },
      { path: `/busy?class=${cls}`, rubyPath: "/busy", tenX: true },
      { path: "/", rubyPath: "/" },
    ];
    const p2 = await measurePages({ ours: dash, compare }, redis, ruby, server.url, widePages);
    const c2 = await measureCli(redis, server.url, ruby, [
      { args: ["processes"], rubyName: "processes", api: (a: SidekiqApi) => a.processes.list() },
      { args: ["stats"], rubyName: "stats", api: (a: SidekiqApi) => a.stats() },
    ]);
    rss.push(
      ["dashboard (after the wide fleet too)", dash.peakRssKb()],
      ["Ruby Web UI process (wide fleet)", p2.rubyRss],
    );
    await dash.stop();
    await compare?.stop();

    let bulk: BulkFigures | undefined;
    if (BULK) {
      console.log("\nretry all");
      bulk = await bulkRetryAll(redis, server.url, size, ruby, seedRetries);
    }

    const cliRss = Math.max(...[...c1.rows, ...c2.rows].map((r) => r.ours?.rss_kb ?? 0));
    rss.push(["CLI, largest of the commands above", cliRss]);
    if (bulk?.ours.rssKb) rss.push(["CLI retry --all", bulk.ours.rssKb]);
    report.push(
      `# bench:ops: the dashboard, CLI and bulk retry at operator scale, beside Sidekiq 8.1.7\n`,
      `Generated by \`npm run bench:ops\` (OPS_SCALE=${SCALE}, ${RUNS} runs per figure after a warm-up; medians) on ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}, ${new Date().toISOString().slice(0, 16)} UTC.`,
      `Redis held ${mem} after seeding, which took ${seedS.toFixed(1)} s: ${size.retries.toLocaleString("en-US")} retries, ${size.dead.toLocaleString("en-US")} dead, ${size.scheduled.toLocaleString("en-US")} scheduled, ${size.queues} queues × ${size.jobsPerQueue} jobs, ${size.processes.toLocaleString("en-US")} processes running ${(size.processes * size.jobsPerProcess).toLocaleString("en-US")} jobs, then ${wide.toLocaleString("en-US")} processes running ${(wide * size.jobsPerProcess).toLocaleString("en-US")}.`,
      `Ours: \`sidekiq-bridge web\` from dist/ in its own process, timed over loopback HTTP to the last byte; the CLI as a whole process (Node start included). Ruby: Sidekiq::Web rendered in-process with Rack::MockRequest, and Sidekiq's API in-process (no process start). Ruby has no Busy filter: a filtered Busy of ours is set against Ruby's whole /busy, what an operator looking for those jobs waits for; likewise our first filtered page against Ruby's filter, which scans the whole set. Redis work is INFO commandstats (calls, server time) around one request.${COMPARE_DIST ? ` Compare: the same pages from a dashboard built from another tree (\`${COMPARE_DIST}\`), timed right after ours, page by page.` : ""}\n`,
      table(`Pages, ${size.processes.toLocaleString("en-US")} processes`, p1.rows, "page"),
      table("CLI (ours) and API (Ruby)", c1.rows, "cli"),
      table(`Pages, ${wide.toLocaleString("en-US")} processes`, p2.rows, "page"),
      table(`CLI, ${wide.toLocaleString("en-US")} processes`, c2.rows, "cli"),
      `### Peak RSS (target ≤ ${RSS_TARGET_MB} MB for the dashboard and the CLI)\n\n| process | peak RSS |\n|---|---:|\n${rss.map(([k, v]) => `| ${k} | ${Math.round(v / 1024)} MB${k.startsWith("dashboard") || k.startsWith("CLI") ? (v / 1024 <= RSS_TARGET_MB ? " ok" : " MISSED") : ""} |`).join("\n")}\n`,
    );
    if (bulk) report.push(bulk.markdown);
    const text = report.join("\n");
    console.log(`\n${text}`);
    if (OUT !== "-") {
      writeFileSync(OUT, text);
      console.log(`written to ${OUT}`);
    }
  } finally {
    redis.disconnect();
    await server.stop();
    ruby.cleanup();
  }
}

await (process.env.OPS_ONLY === "busy" ? busyMain() : main());
