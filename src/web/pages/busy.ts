// Busy: every live process (Ruby 6/7/8 and Node alike, each read in its own
// dialect by ProcessSet) with Quiet/Stop, and the jobs running now.
import type { ProcessInfo } from "../../api/process-set.js";
import { delimited, formatRss, relativeTime, utcTime } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { form, pager } from "../layout.js";
import { pageCount, paging } from "../pagination.js";
import type { WebRequest } from "../request.js";

function processName(p: ProcessInfo): Html {
  return html`<div class="process-name"><b>${p.hostname ?? p.identity}:${p.pid ?? "?"}</b>
${p.tag ? html`<span class="badge">${p.tag}</span>` : ""}
${p.labels.map((l) => html`<span class="badge label">${l}</span>`)}
${p.quiet ? html`<span class="badge quiet">quiet</span>` : ""}
${p.embedded ? html`<span class="badge">embedded</span>` : ""}
</div>
<div class="process-meta"><span>Queues: ${p.queues.join(", ") || "-"}</span> · <span>Version: <code>${p.version ?? "-"}</code></span> · <span>${p.runtime === "node" ? "Node" : "Ruby"}</span></div>`;
}

export async function busyPage(w: WebRequest): Promise<Html> {
  const [procs, work] = await Promise.all([w.api.processes.list(), w.api.work()]);
  const now = w.api.now();
  const threads = procs.reduce((a, p) => a + p.concurrency, 0);
  const busy = procs.reduce((a, p) => a + p.busy, 0);
  const rss = procs.reduce((a, p) => a + p.rss, 0);
  const { page, count, offset } = paging(w.query, 100);
  const jobs = work.slice(offset, offset + count);
  const actions = (p: ProcessInfo) =>
    p.embedded
      ? html``
      : form(
          w,
          "/busy",
          html`<input type="hidden" name="identity" value="${p.identity}">${p.quiet ? "" : html`<button class="btn" name="action" value="quiet">Quiet</button>`}<button class="btn danger" name="action" value="stop">Stop</button>`,
        );
  return html`<section>
<header class="section-head"><h1>Status</h1></header>
<div class="cards">
<article><span class="count" id="busy-processes">${delimited(procs.length)}</span><span class="desc">Processes</span></article>
<article><span class="count" id="busy-threads">${delimited(threads)}</span><span class="desc">Threads</span></article>
<article><span class="count" id="busy-busy">${delimited(busy)}</span><span class="desc">Busy</span></article>
<article><span class="count">${threads === 0 ? 0 : Math.round((busy / threads) * 100)}%</span><span class="desc">Utilization</span></article>
<article><span class="count">${formatRss(rss)}</span><span class="desc">RSS</span></article>
</div>
<header class="section-head"><h2>Processes</h2>
${form(w, "/busy", html`<button class="btn" name="action" value="quiet-all">Quiet All</button><button class="btn danger" name="action" value="stop-all" data-confirm="Stop every process?">Stop All</button>`)}
</header>
<table class="processes" id="processes"><thead><tr><th>Name</th><th>Started</th><th class="num">RSS</th><th class="num">Threads</th><th class="num">Busy</th><th></th></tr></thead>
<tbody>
${procs.map(
  (p) => html`<tr data-identity="${p.identity}"><td>${processName(p)}</td>
<td title="${utcTime(p.startedAt)}">${p.startedAt !== undefined ? relativeTime(p.startedAt, now) : "-"}</td>
<td class="num">${formatRss(p.rss)}</td><td class="num" data-col="threads">${delimited(p.concurrency)}</td><td class="num" data-col="busy">${delimited(p.busy)}</td>
<td class="actions">${actions(p)}</td></tr>`,
)}
${procs.length === 0 ? html`<tr><td colspan="6">No processes</td></tr>` : ""}
</tbody></table>
<header class="section-head"><h2>Jobs</h2><span>${delimited(work.length)} running</span></header>
<table class="jobs" id="work"><thead><tr><th>Process</th><th>TID</th><th>JID</th><th>Queue</th><th>Job</th><th>Arguments</th><th>Started</th></tr></thead>
<tbody>
${jobs.map(
  (
    j,
  ) => html`<tr><td>${j.process}</td><td><code>${j.tid}</code></td><td><code>${j.jid ?? "-"}</code></td><td>${j.queue ?? "-"}</td>
<td>${shown(j.displayClass, 200)}</td><td><code class="args">${shown(j.record?.raw("args") ?? j.payload, 300)}</code></td>
<td title="${utcTime(j.runAt)}">${relativeTime(j.runAt, now)}</td></tr>`,
)}
${work.length === 0 ? html`<tr><td colspan="7">Nothing running</td></tr>` : ""}
</tbody></table>
${pager(w, page, pageCount(work.length, count))}
</section>`;
}
