// Queues: every queue with its size and latency, and one queue's jobs a page
// at a time (LRANGE), with Delete per job and Clear for the queue.
import { payloadSeconds } from "../../../core/api/job-entry.js";
import { delimited, formatLatency, relativeTime, utcTime } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { form, pager } from "../layout.js";
import { pageCount, paging } from "../pagination.js";
import { href, type WebRequest } from "../request.js";

export async function queuesPage(w: WebRequest): Promise<Html> {
  const queues = await w.api.queueSummaries();
  const { page, count, offset } = paging(w.query, 100);
  const shownQueues = queues.slice(offset, offset + count);
  return html`<section>
<header class="section-head"><h1>Queues</h1><span>${delimited(queues.length)} queues</span></header>
<table class="queues" id="queues"><thead><tr><th>Queue</th><th class="num">Size</th><th class="num">Latency</th><th>Actions</th></tr></thead>
<tbody>
${shownQueues.map(
  (
    q,
  ) => html`<tr data-queue="${q.name}"><td><a href="${href(w, `/queues/${encodeURIComponent(q.name)}`)}">${shown(q.name, 200)}</a>${q.paused ? html` <span class="badge quiet">paused</span>` : ""}</td>
<td class="num" data-col="size">${delimited(q.size)}</td><td class="num" data-col="latency">${formatLatency(q.latency)}</td>
<td>${form(w, `/queues/${encodeURIComponent(q.name)}/clear`, html`<button class="btn danger" data-confirm="Delete every job in this queue?">Delete</button>`)}</td></tr>`,
)}
${queues.length === 0 ? html`<tr><td colspan="4">No queues</td></tr>` : ""}
</tbody></table>
${pager(w, page, pageCount(queues.length, count))}
</section>`;
}

export async function queuePage(w: WebRequest): Promise<Html> {
  const name = w.params[0]!;
  const queue = w.api.queue(name);
  const [size, latency] = await Promise.all([queue.size(), queue.latency()]);
  const { page, count, offset } = paging(w.query);
  const entries = await queue.page(offset, count);
  const now = w.api.now();
  return html`<section>
<header class="section-head"><h1>Current messages in <span class="title">${shown(name, 200)}</span></h1>
<span>Size <b id="queue-size">${delimited(size)}</b> · Latency <b>${formatLatency(latency)}</b> s</span>
${form(w, `/queues/${encodeURIComponent(name)}/clear`, html`<button class="btn danger" data-confirm="Delete every job in this queue?">Clear</button>`)}
</header>
<table class="jobs" id="queue-jobs"><thead><tr><th>#</th><th>Job</th><th>Arguments</th><th>JID</th><th>Enqueued</th><th></th></tr></thead>
<tbody>
${entries.map((e) => {
  const enq = payloadSeconds(e.record, "enqueued_at") ?? payloadSeconds(e.record, "created_at");
  return html`<tr data-jid="${e.jid ?? ""}"><td>${e.index + 1}</td><td>${shown(e.displayClass ?? "(not a JSON object)", 200)}</td>
<td><code class="args">${shown(e.record?.raw("args") ?? e.raw, 500)}</code></td><td><code>${e.jid ?? "-"}</code></td>
<td title="${utcTime(enq)}">${enq !== undefined ? relativeTime(enq, now) : "-"}</td>
<td>${form(w, `/queues/${encodeURIComponent(name)}/delete`, html`<input type="hidden" name="index" value="${e.index}"><input type="hidden" name="jid" value="${e.jid ?? ""}"><button class="btn danger">Delete</button>`)}</td></tr>`;
})}
${entries.length === 0 ? html`<tr><td colspan="6">No jobs found</td></tr>` : ""}
</tbody></table>
${pager(w, page, pageCount(size, count))}
</section>`;
}
