// Retries, Scheduled and Dead: the three sorted sets, a page at a time in the
// order of Ruby's Web UI (retries and scheduled soonest first, ZRANGE; dead
// latest first, ZRANGE REV: Sidekiq 6.4.1, 7.3.2 and 8.1.7 alike), a range
// by rank so a deep page costs what the first does. Filtered by class
// (exact) or by text, reading ranges of the set under a time budget and
// saying how far it got, with the actions for one job, the selected ones, or all.
import type { JobSetName, SortedEntry } from "../../../core/api/sorted-entry.js";
import type { ListOrder } from "../../../core/api/sorted-set.js";
import { decodeBacktrace } from "../../../core/wire/backtrace.js";
import { DEAD_KEY, RETRY_KEY, SCHEDULE_KEY } from "../../../core/wire/keys.js";
import { delimited, relativeTime, utcTime } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { form, pager } from "../layout.js";
import { pageCount, paging } from "../pagination.js";
import { href, type WebRequest } from "../request.js";
import { entryKey } from "../set-entries.js";

export interface SetView {
  set: JobSetName;
  path: string;
  title: string;
  /** The heading of the score column. */
  when: string;
  /** Actions offered, in order. */
  actions: Array<[action: string, label: string]>;
  showError: boolean;
  /** The order Ruby's Web UI lists the set in (`Paginator#page`, `reverse:` only for dead). */
  order: ListOrder;
}

export const SET_VIEWS: Record<string, SetView> = {
  retries: {
    set: RETRY_KEY,
    path: "/retries",
    title: "Retries",
    when: "Next Retry",
    actions: [
      ["retry", "Retry Now"],
      ["add-to-queue", "Add to Queue"],
      ["kill", "Kill"],
      ["delete", "Delete"],
    ],
    showError: true,
    order: "asc",
  },
  scheduled: {
    set: SCHEDULE_KEY,
    path: "/scheduled",
    title: "Scheduled Jobs",
    when: "When",
    actions: [
      ["add-to-queue", "Add to Queue"],
      ["kill", "Kill"],
      ["delete", "Delete"],
    ],
    showError: false,
    order: "asc",
  },
  morgue: {
    set: DEAD_KEY,
    path: "/morgue",
    title: "Dead Jobs",
    when: "Last Retry",
    actions: [
      ["retry", "Retry Now"],
      ["add-to-queue", "Add to Queue"],
      ["delete", "Delete"],
    ],
    showError: true,
    order: "desc",
  },
};

/** The most matches a text filter lists (the filter is a scan of the whole set). */
export const MAX_FILTER_MATCHES = 1000;

/** How long one filtered page reads the set before it shows what it found and where to go on. */
export const FILTER_BUDGET_MS = 150;
/** The most members one filtered page reads (ranges of 2,000, one in memory at a time). */
export const FILTER_BUDGET_MEMBERS = 500_000;

function errorText(e: SortedEntry): string {
  const cls = e.record?.getString("error_class") ?? "";
  const msg = e.record?.getString("error_message") ?? "";
  return cls || msg ? `${cls}: ${msg}` : "";
}

export async function jobSetPage(w: WebRequest, view: SetView): Promise<Html> {
  const set = w.api.set(view.set);
  const { page, count, offset } = paging(w.query);
  const substr = w.query.get("substr") ?? "";
  const className = w.query.get("class") ?? "";
  let entries: SortedEntry[];
  let total: number | undefined;
  let note: Html = html``;
  let filterPager: Html = html``;
  if (substr !== "" || className !== "") {
    // Filtered: read the set in the page's order from rank `from`, in ranges, under a time budget.
    const from = Math.max(0, Number.parseInt(w.query.get("from") ?? "0", 10) || 0);
    const [found, size] = await Promise.all([
      set.filteredPage({
        match: (e) =>
          (className === "" || e.displayClass === className || e.klass === className) &&
          (substr === "" || e.raw.includes(substr)),
        quick: (raw) => raw.includes(substr) && raw.includes(className),
        from,
        limit: count,
        order: view.order,
        budget: FILTER_BUDGET_MEMBERS,
        budgetMs: FILTER_BUDGET_MS,
      }),
      set.size(),
    ]);
    entries = found.entries;
    const q = { substr: substr || undefined, class: className || undefined };
    const end = Math.min(from + found.scanned, size);
    note = html`<p class="note" id="filter-note">${delimited(entries.length)} matching job(s) among entries ${delimited(Math.min(from + 1, end))}–${delimited(end)}: scanned <span id="filter-scanned">${delimited(end)}</span> of <span id="filter-size">${delimited(size)}</span> (${view.order === "asc" ? "soonest" : "latest"} first).</p>`;
    filterPager = html`<ul class="pagination">${from > 0 ? html`<li><a href="${href(w, view.path, q)}">« First</a></li>` : ""}${found.next !== undefined && found.next < size ? html`<li><a id="filter-next" href="${href(w, view.path, { ...q, from: found.next })}">More matches »</a></li>` : ""}</ul>`;
  } else {
    [entries, total] = await Promise.all([set.page(offset, count, view.order), set.size()]);
  }
  const now = w.api.now();
  const query = { substr: substr || undefined, class: className || undefined };
  const selectedForm = `${view.path}/selected`;
  const bulk = form(
    w,
    `${view.path}/all`,
    html`${substr ? html`<input type="hidden" name="substr" value="${substr}">` : ""}${className ? html`<input type="hidden" name="class" value="${className}">` : ""}${view.actions.map(
      ([a, label]) =>
        html`<button class="btn${a === "delete" || a === "kill" ? " danger" : ""}" name="action" value="${a}" data-confirm="${label} ${substr || className ? "every matching job" : "all"}?">${label === "Retry Now" ? "Retry" : label} All</button>`,
    )}`,
  );
  return html`<section>
<header class="section-head"><h1>${view.title}</h1>
<form method="get" action="${href(w, view.path)}" class="filter"><input type="search" name="substr" value="${substr}" placeholder="Filter by text" aria-label="Filter by text"><input type="text" name="class" value="${className}" placeholder="Job class" aria-label="Job class"><button class="btn">Filter</button></form>
</header>
${note}
<div class="bulk">${bulk}</div>
${w.readOnly ? "" : html`<form method="post" action="${href(w, selectedForm)}" id="selected-form"><input type="hidden" name="authenticity_token" value="${w.csrf}"></form>`}
<table class="jobs" id="set-jobs"><thead><tr>${w.readOnly ? "" : html`<th><input type="checkbox" class="check-all" aria-label="Select all"></th>`}<th>${view.when}</th>${view.set === RETRY_KEY ? html`<th class="num">Retry Count</th>` : ""}<th>Queue</th><th>Job</th><th>Arguments</th>${view.showError ? html`<th>Error</th>` : ""}</tr></thead>
<tbody>
${entries.map((e) => {
  const key = entryKey(e);
  return html`<tr data-jid="${e.jid ?? ""}">
${w.readOnly ? "" : html`<td><input type="checkbox" name="key" value="${key}" form="selected-form" aria-label="Select"></td>`}
<td><a href="${href(w, `${view.path}/${encodeURIComponent(key)}`)}" title="${utcTime(e.at)}">${relativeTime(e.at, now)}</a></td>
${view.set === RETRY_KEY ? html`<td class="num">${e.record?.raw("retry_count") ?? "-"}</td>` : ""}
<td>${e.queue ? html`<a href="${href(w, `/queues/${encodeURIComponent(e.queue)}`)}">${shown(e.queue, 100)}</a>` : "-"}</td>
<td><a href="${href(w, view.path, { class: e.displayClass })}">${shown(e.displayClass ?? "(not a JSON object)", 200)}</a></td>
<td><code class="args">${shown(e.record?.raw("args") ?? e.raw, 300)}</code></td>
${view.showError ? html`<td class="error">${shown(errorText(e), 300)}</td>` : ""}
</tr>`;
})}
${entries.length === 0 ? html`<tr><td colspan="7">No ${view.title.toLowerCase()} found</td></tr>` : ""}
</tbody></table>
${
  w.readOnly || entries.length === 0
    ? ""
    : html`<div class="bulk selected">${view.actions.map(([a, label]) => html`<button class="btn${a === "delete" || a === "kill" ? " danger" : ""}" form="selected-form" name="action" value="${a}">${label}</button>`)} <span class="hint">the selected jobs</span></div>`
}
${total === undefined ? filterPager : pager(w, page, pageCount(total, count), query)}
</section>`;
}

function fieldRow(label: string, value: Html | string | number | undefined): Html {
  return html`<tr><th>${label}</th><td>${value ?? "-"}</td></tr>`;
}

export async function jobSetEntryPage(w: WebRequest, view: SetView, entry: SortedEntry | undefined): Promise<Html> {
  if (!entry)
    return html`<section><h1>${view.title}</h1><p class="note">No job with that key: it was retried, moved or deleted.</p><p><a href="${href(w, view.path)}">Back</a></p></section>`;
  const rec = entry.record;
  const now = w.api.now();
  const time = (k: string) => {
    const raw = rec?.raw(k);
    if (raw === undefined || !/^-?\d/.test(raw)) return undefined;
    const s = Number(raw) > 1e11 ? Number(raw) / 1000 : Number(raw);
    return html`<span title="${raw}">${utcTime(s)} (${relativeTime(s, now)})</span>`;
  };
  const backtrace = backtraceLines(entry);
  const key = entryKey(entry);
  return html`<section>
<header class="section-head"><h1>Job</h1>
${form(w, `${view.path}/selected`, html`<input type="hidden" name="key" value="${key}">${view.actions.map(([a, label]) => html`<button class="btn${a === "delete" || a === "kill" ? " danger" : ""}" name="action" value="${a}">${label}</button>`)}`)}
</header>
<table class="job-info" id="job-info"><tbody>
${fieldRow("Queue", shown(entry.queue, 200))}
${fieldRow("Job", shown(entry.displayClass, 200))}
${entry.klass !== entry.displayClass ? fieldRow("Wrapper", shown(entry.klass, 200)) : ""}
${fieldRow("Arguments", html`<pre class="args">${shown(rec?.raw("args") ?? entry.raw, 20000)}</pre>`)}
${fieldRow("JID", html`<code>${entry.jid ?? "-"}</code>`)}
${fieldRow("Created At", time("created_at"))}
${fieldRow("Enqueued", time("enqueued_at"))}
${fieldRow(view.when, html`${utcTime(entry.at)} (${relativeTime(entry.at, now)})`)}
${view.set !== SCHEDULE_KEY ? fieldRow("Retry Count", rec?.raw("retry_count")) : ""}
${view.set !== SCHEDULE_KEY ? fieldRow("Failed At", time("failed_at")) : ""}
${view.set !== SCHEDULE_KEY ? fieldRow("Retried At", time("retried_at")) : ""}
</tbody></table>
${
  view.showError
    ? html`<h2>Error</h2>
<table class="error-info" id="error-info"><tbody>
${fieldRow("Error Class", shown(rec?.getString("error_class"), 500))}
${fieldRow("Error Message", shown(rec?.getString("error_message"), 5000))}
${backtrace ? fieldRow("Error Backtrace", html`<pre class="backtrace">${shown(backtrace.join("\n"), 20000)}</pre>`) : ""}
</tbody></table>`
    : ""
}
<h2>Payload</h2>
<pre class="payload">${shown(entry.raw, 20000)}</pre>
</section>`;
}

function backtraceLines(entry: SortedEntry): string[] | undefined {
  const v = entry.record?.get("error_backtrace");
  if (v === undefined || v === null) return undefined;
  try {
    return decodeBacktrace(v);
  } catch (e) {
    return [`(the backtrace could not be decoded: ${(e as Error).message})`];
  }
}
