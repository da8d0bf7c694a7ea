// Busy: the live processes (Ruby 6/7/8 and Node alike, each read in its own
// dialect) with Quiet/Stop, and the jobs running now, each a page at a time
// with the fleet's totals (busy-pages.ts reads the fleet once, in pipelined
// batches). Narrowed by host, queue and class; `?only=jobs|processes` shows
// one of the two tables, as Sidekiq 8.1.6+.
import type { BusyFilter } from "../../../core/api/busy-pages.js";
import type { ProcessInfo } from "../../../core/api/process-hash.js";
import { ActionError } from "../actions.js";
import { delimited, formatRss, relativeTime, utcTime } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { form, pager } from "../layout.js";
import { pageCount, paging } from "../pagination.js";
import { href, type WebRequest } from "../request.js";

/** Rows per page of each table unless `count` / `process_count` say otherwise (Ruby's Busy shows 100 jobs). */
export const BUSY_COUNT = 100;

function processName(p: ProcessInfo): Html {
  return html`<div class="process-name"><b>${p.hostname ?? p.identity}:${p.pid ?? "?"}</b>
${p.tag ? html`<span class="badge">${p.tag}</span>` : ""}
${p.labels.map((l) => html`<span class="badge label">${l}</span>`)}
${p.quiet ? html`<span class="badge quiet">quiet</span>` : ""}
${p.embedded ? html`<span class="badge">embedded</span>` : ""}
</div>
<div class="process-meta"><span>Queues: ${p.queues.join(", ") || "-"}</span> · <span>Version: <code>${p.version ?? "-"}</code></span> · <span>${p.side === "node" ? "Node" : "Ruby"}</span></div>`;
}

function busyFilter(q: URLSearchParams): BusyFilter {
  const f: BusyFilter = {};
  const host = q.get("host");
  const queue = q.get("queue");
  const className = q.get("class");
  if (host) f.host = host;
  if (queue) f.queue = queue;
  if (className) f.className = className;
  return f;
}

export async function busyPage(w: WebRequest): Promise<Html> {
  const only = w.query.get("only");
  // Sidekiq 8.1.6+ answers `halt 401, "Invalid value for only"`; a bad parameter is a 400 here.
  if (only !== null && only !== "jobs" && only !== "processes")
    throw new ActionError(`Invalid value for only: ${JSON.stringify(only)} (jobs or processes)`);
  const filter = busyFilter(w.query);
  const jobPaging = paging(w.query, BUSY_COUNT);
  const procQuery = new URLSearchParams();
  for (const [k, v] of [
    ["page", w.query.get("process_page")],
    ["count", w.query.get("process_count")],
  ] as const)
    if (v !== null) procQuery.set(k, v);
  const procPaging = paging(procQuery, BUSY_COUNT);
  const read = w.api.processes.page({
    filter,
    // By page number, so a page past the end shows page 1, as Ruby's page_items.
    ...(only !== "jobs" ? { processes: { page: procPaging.page, count: procPaging.count } } : {}),
    ...(only !== "processes" ? { jobs: { page: jobPaging.page, count: jobPaging.count } } : {}),
  });
  // The summary bar's busy figure comes from this read of the fleet (2,000 processes: 2,000 HGETs fewer).
  w.workersSize = read.then((r) => r.totals.workersSize);
  w.workersSize.catch(() => undefined); // a failed read is reported by the page's own await
  const result = await read;
  const { totals } = result;
  const now = w.api.now();
  const query: Record<string, string | undefined> = {
    only: only ?? undefined,
    host: filter.host,
    queue: filter.queue,
    class: filter.className,
    count: w.query.get("count") ?? undefined,
    process_count: w.query.get("process_count") ?? undefined,
  };
  const actions = (p: ProcessInfo) =>
    p.embedded
      ? html``
      : form(
          w,
          "/busy",
          html`<input type="hidden" name="identity" value="${p.identity}">${p.quiet ? "" : html`<button class="btn" name="action" value="quiet">Quiet</button>`}<button class="btn danger" name="action" value="stop">Stop</button>`,
        );
  const filtered = filter.host !== undefined || filter.queue !== undefined || filter.className !== undefined;
  const views: Html[] = [];
  if (only !== "processes")
    views.push(html`<a href="${href(w, "/busy", { ...query, only: "jobs", process_count: undefined })}">Only jobs</a>`);
  if (only !== "jobs")
    views.push(
      html`<a href="${href(w, "/busy", { ...query, only: "processes", count: undefined })}">Only processes</a>`,
    );
  if (only || filtered) views.push(html`<a href="${href(w, "/busy")}">Everything</a>`);
  const procs = result.processes;
  const jobs = result.jobs;
  return html`<section>
<header class="section-head"><h1>Status</h1>
<form method="get" action="${href(w, "/busy")}" class="filter">${only ? html`<input type="hidden" name="only" value="${only}">` : ""}<input type="text" name="host" value="${filter.host ?? ""}" placeholder="Host" aria-label="Host"><input type="text" name="queue" value="${filter.queue ?? ""}" placeholder="Queue" aria-label="Queue"><input type="text" name="class" value="${filter.className ?? ""}" placeholder="Job class" aria-label="Job class"><button class="btn">Filter</button></form>
</header>
<div class="cards">
<article><span class="count" id="busy-processes">${delimited(totals.processes)}</span><span class="desc">Processes</span></article>
<article><span class="count" id="busy-threads">${delimited(totals.threads)}</span><span class="desc">Threads</span></article>
<article><span class="count" id="busy-busy">${delimited(totals.busy)}</span><span class="desc">Busy</span></article>
<article><span class="count">${totals.threads === 0 ? 0 : Math.round((totals.busy / totals.threads) * 100)}%</span><span class="desc">Utilization</span></article>
<article><span class="count">${formatRss(totals.rss)}</span><span class="desc">RSS</span></article>
</div>
<p class="note">${views.map((v, i) => html`${i > 0 ? " · " : ""}${v}`)}</p>
${
  procs
    ? html`<header class="section-head"><h2>Processes</h2><span id="busy-process-total">${delimited(procs.total)}${filtered ? " matching" : ""}</span>
${form(w, "/busy", html`<button class="btn" name="action" value="quiet-all">Quiet All</button><button class="btn danger" name="action" value="stop-all" data-confirm="Stop every process?">Stop All</button>`)}
</header>
<table class="processes" id="processes"><thead><tr><th>Name</th><th>Started</th><th class="num">RSS</th><th class="num">Threads</th><th class="num">Busy</th><th></th></tr></thead>
<tbody>
${procs.rows.map(
  (p) => html`<tr data-identity="${p.identity}"><td>${processName(p)}</td>
<td title="${utcTime(p.startedAt)}">${p.startedAt !== undefined ? relativeTime(p.startedAt, now) : "-"}</td>
<td class="num">${formatRss(p.rss)}</td><td class="num" data-col="threads">${delimited(p.concurrency)}</td><td class="num" data-col="busy">${delimited(p.busy)}</td>
<td class="actions">${actions(p)}</td></tr>`,
)}
${procs.rows.length === 0 ? html`<tr><td colspan="6">No processes</td></tr>` : ""}
</tbody></table>
${pager(w, procs.page, pageCount(procs.total, procPaging.count), query, "process_page")}`
    : ""
}
${
  jobs
    ? html`<header class="section-head"><h2>Jobs</h2><span id="busy-job-total">${delimited(jobs.total)} running${filtered ? " matching" : ""}</span></header>
<table class="jobs" id="work"><thead><tr><th>Process</th><th>TID</th><th>JID</th><th>Queue</th><th>Job</th><th>Arguments</th><th>Started</th></tr></thead>
<tbody>
${jobs.rows.map(
  (
    j,
  ) => html`<tr data-jid="${j.jid ?? ""}"><td>${j.process}</td><td><code>${j.tid}</code></td><td><code>${j.jid ?? "-"}</code></td><td>${j.queue ?? "-"}</td>
<td>${shown(j.displayClass, 200)}</td><td><code class="args">${shown(j.record?.raw("args") ?? j.payload, 300)}</code></td>
<td title="${utcTime(j.runAt)}">${relativeTime(j.runAt, now)}</td></tr>`,
)}
${jobs.rows.length === 0 ? html`<tr><td colspan="7">Nothing running</td></tr>` : ""}
</tbody></table>
${pager(w, jobs.page, pageCount(jobs.total, jobPaging.count), query)}`
    : ""
}
</section>`;
}
