// The page around every view: Sidekiq's navigation tabs, the summary bar of
// counters (Processed, Failed, Busy, Enqueued, Retries, Scheduled, Dead) and
// the footer. Styles and script are files under /assets (no inline code).
import type { StatsSnapshot } from "../../core/api/stats.js";
import { javascriptRuntimeLabel } from "../../core/wire/bridge-label.js";
import { CSRF_FIELD } from "./csrf.js";
import { delimited, utcTime } from "./format.js";
import { html, type Html } from "./html.js";
import { href, type WebRequest } from "./request.js";

/** A navigation tab: its path and label. */
export type Tab = readonly [path: string, label: string];

/** The dashboard's own tabs; the add-ons' follow (route.ts, WebTab). */
export const CORE_TABS: readonly Tab[] = [
  ["/", "Dashboard"],
  ["/busy", "Busy"],
  ["/queues", "Queues"],
  ["/retries", "Retries"],
  ["/scheduled", "Scheduled"],
  ["/morgue", "Dead"],
  ["/metrics", "Metrics"],
];

function activeTab(tabs: readonly Tab[], path: string): string {
  for (const [p] of tabs.slice(1)) if (path === p || path.startsWith(`${p}/`)) return p;
  return "/";
}

export function summaryBar(w: WebRequest, s: StatsSnapshot): Html {
  const card = (id: string, label: string, value: number, link?: string) => {
    const inner = html`<span class="count" id="${id}" data-stat="${id}">${delimited(value)}</span><span class="desc">${label}</span>`;
    return html`<article>${link ? html`<a href="${href(w, link)}">${inner}</a>` : inner}</article>`;
  };
  return html`<div class="cards" id="summary">
${card("processed", "Processed", s.processed)}${card("failed", "Failed", s.failed)}${card("busy", "Busy", s.workersSize, "/busy")}${card("enqueued", "Enqueued", s.enqueued, "/queues")}${card("retries", "Retries", s.retrySize, "/retries")}${card("scheduled", "Scheduled", s.scheduledSize, "/scheduled")}${card("dead", "Dead", s.deadSize, "/morgue")}
</div>`;
}

export function layout(
  w: WebRequest,
  opts: { title: string; stats: StatsSnapshot; body: Html; tabs: readonly Tab[] },
): Html {
  const active = activeTab(opts.tabs, w.path);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · Sidekiq</title>
<link rel="icon" href="${href(w, "/assets/favicon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${href(w, "/assets/dashboard.css")}">
<script src="${href(w, "/assets/dashboard.js")}" defer></script>
</head>
<body data-base="${w.base}" data-poll="${w.pollSeconds}">
<header class="navbar">
<a class="brand" href="${href(w, "/")}">Sidekiq</a>
<nav><ul>
${opts.tabs.map(([p, label]) => html`<li${active === p ? html` class="active"` : ""}><a href="${href(w, p)}">${label}</a></li>`)}
</ul></nav>
${w.readOnly ? html`<span class="badge readonly">read-only</span>` : ""}
</header>
<main>
${summaryBar(w, opts.stats)}
${opts.body}
</main>
<footer>
<span>sidekiq-bridge · ${javascriptRuntimeLabel()}</span>
<span>Redis: ${w.api.redis.options.host ?? "?"}:${w.api.redis.options.port ?? "?"}/${w.api.redis.options.db ?? 0}</span>
<span>Time: ${utcTime(w.api.now() / 1000)}</span>
</footer>
</body>
</html>`;
}

/** A POST form with the CSRF token; buttons inside carry `name=action`. */
export function form(w: WebRequest, action: string, inner: Html, cls = "inline"): Html {
  if (w.readOnly) return html``;
  return html`<form method="post" action="${href(w, action)}" class="${cls}"><input type="hidden" name="${CSRF_FIELD}" value="${w.csrf}">${inner}</form>`;
}

/** Pagination links like Sidekiq's `_paging`: first, previous, current, next, last. */
export function pager(
  w: WebRequest,
  page: number,
  pages: number,
  query: Record<string, string | undefined> = {},
  param = "page",
): Html {
  if (pages <= 1) return html``;
  const link = (p: number, label: string, cls = "") =>
    html`<li class="${cls}"><a href="${href(w, w.path, { ...query, [param]: p })}">${label}</a></li>`;
  return html`<ul class="pagination">
${page > 1 ? link(1, "«") : ""}${page > 1 ? link(page - 1, String(page - 1)) : ""}
<li class="current"><span>${page}</span></li>
${page < pages ? link(page + 1, String(page + 1)) : ""}${page < pages ? link(pages, "»") : ""}
</ul>`;
}
