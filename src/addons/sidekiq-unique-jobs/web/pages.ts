// Locks: sidekiq-unique-jobs' Web UI tab. The digests a page at a time
// (newest first; a text filter scans with ZSCAN MATCH and pages by cursor),
// one lock's keys (locked jids, queued/primed, lock info, its changelog
// entries), Delete for one lock or all, and the changelog.
import { DIGESTS, EXPIRING_DIGESTS } from "../locksmith.js";
import { resolveConfig, type UniqueJobsConfig } from "../config.js";
import { changelogPage, filteredLockPage, lockDetail, lockPage, type ChangelogEntry, type LockPage } from "../locks.js";
import {
  delimited,
  form,
  href,
  html,
  type Html,
  pageCount,
  pager,
  paging,
  relativeTime,
  shown,
  utcTime,
  type WebRequest,
} from "../../../tools/web/extension.js";

/** The fleet's gem (8 unless the handler was told 9). */
export function uniqueJobsConfig(w: WebRequest): UniqueJobsConfig {
  return (w.extensions.get("uniqueJobs") as UniqueJobsConfig | undefined) ?? resolveConfig({});
}

export const lockPath = (digest: string) => `/locks/${encodeURIComponent(digest)}`;

function since(epochSeconds: number | undefined, now: number): Html {
  if (epochSeconds === undefined || !Number.isFinite(epochSeconds)) return html`-`;
  // Gem 9 scores in milliseconds, gem 8 in float seconds.
  const s = epochSeconds > 1e11 ? epochSeconds / 1000 : epochSeconds;
  return html`<span title="${utcTime(s)}">${relativeTime(s, now)}</span>`;
}

function cursorValue(v: string | null): string {
  return v !== null && /^\d{1,20}$/.test(v) ? v : "0";
}

/** Locks, or with `?expiring=1` the expiring locks (the gem's "Expiring Locks" tab). */
export async function locksPage(w: WebRequest): Promise<Html> {
  const filter = w.query.get("filter") ?? "";
  const expiring = w.query.get("expiring") === "1" ? "1" : undefined;
  const set = expiring ? EXPIRING_DIGESTS : DIGESTS;
  const { page, count, offset } = paging(w.query, 100);
  const cursor = cursorValue(w.query.get("cursor"));
  const listing: LockPage =
    filter !== ""
      ? await filteredLockPage(w.api.redis, filter, cursor, count, set)
      : await lockPage(w.api.redis, offset, count, set);
  const now = w.api.now();
  const deleteButton = (digest: string) =>
    form(
      w,
      `${lockPath(digest)}/delete`,
      html`<button class="btn danger" data-action="delete" data-confirm="Delete this lock?">Delete</button>`,
    );
  return html`<section>
<header class="section-head"><h1>${expiring ? "Expiring Locks" : "Locks"}</h1><span>${delimited(listing.total)} digests</span>
<form method="get" action="${href(w, "/locks")}" class="filter">${expiring ? html`<input type="hidden" name="expiring" value="1">` : ""}<input type="search" name="filter" value="${filter}" placeholder="Filter by digest" maxlength="500"><button class="btn">Filter</button></form>
<nav class="subnav"><a href="${href(w, "/locks")}" id="locks-all">Locks</a> · <a href="${href(w, "/locks", { expiring: "1" })}" id="locks-expiring">Expiring Locks</a> · <a href="${href(w, "/locks/changelogs")}" id="locks-changelogs">Changelogs</a></nav>
</header>
<table class="jobs" id="locks"><thead><tr><th>Digest</th><th>Lock</th><th class="num">Locks</th><th>${expiring ? "Expires" : "Since"}</th><th></th></tr></thead>
<tbody>
${listing.locks.map(
  (
    l,
  ) => html`<tr data-digest="${l.digest}"><td><a href="${href(w, lockPath(l.digest))}"><code>${shown(l.digest, 300)}</code></a></td>
<td>${l.lockType ?? "-"}</td><td class="num">${delimited(l.locked)}</td><td>${since(l.since, now)}</td><td>${deleteButton(l.digest)}</td></tr>`,
)}
${listing.locks.length === 0 ? html`<tr><td colspan="5">No locks found</td></tr>` : ""}
</tbody></table>
${
  filter !== ""
    ? listing.cursor && listing.cursor !== "0"
      ? html`<ul class="pagination"><li><a href="${href(w, "/locks", { filter, expiring, cursor: listing.cursor })}" rel="next">More matches</a></li></ul>`
      : ""
    : pager(w, page, pageCount(listing.total, count), { expiring })
}
${
  listing.total > 0
    ? form(
        w,
        "/locks/delete-all",
        html`<button class="btn danger" data-action="delete-all" data-confirm="Delete every lock?">Delete All</button>`,
      )
    : ""
}
</section>`;
}

function changelogRows(entries: ChangelogEntry[], now: number): Html {
  return html`${entries.map(
    (e) =>
      html`<tr><td>${since(typeof e.time === "number" ? e.time : Number(e.time), now)}</td><td><code>${shown(String(e.digest ?? ""), 300)}</code></td><td><code>${shown(String(e.job_id ?? ""), 100)}</code></td><td>${shown(String(e.message ?? ""), 500)}</td><td>${shown(String(e.script ?? ""), 100)}</td></tr>`,
  )}`;
}

/** A lock info value: text as it is, anything else as JSON, absent or null as "-" (the gem writes nil limits and TTLs). */
function infoText(v: unknown): string {
  if (v === undefined || v === null) return "-";
  return typeof v === "string" ? v : JSON.stringify(v);
}

export async function lockDetailPage(w: WebRequest): Promise<Html> {
  const digest = w.params[0]!;
  const d = await lockDetail(w.api.redis, digest, uniqueJobsConfig(w));
  const now = w.api.now();
  const info = d.info;
  const infoRow = (label: string, key: string) =>
    html`<tr><th>${label}</th><td>${shown(infoText(info?.[key]), 1000)}</td></tr>`;
  return html`<section>
<header class="section-head"><h1>Lock <small class="title"><code>${shown(digest, 300)}</code></small></h1>
<div class="actions">${form(w, `${lockPath(digest)}/delete`, html`<button class="btn danger" data-action="delete" data-confirm="Delete this lock?">Delete</button>`)}</div></header>
${
  info
    ? html`<table class="detail" id="lock-info"><caption>Lock information</caption><tbody>
${infoRow("Worker", "worker")}${infoRow("Queue", "queue")}${infoRow("Type", "type")}${infoRow("Limit", "limit")}${infoRow("TTL", "ttl")}${infoRow("Timeout", "timeout")}${infoRow("Args", "lock_args")}
</tbody></table>`
    : d.infoRaw
      ? html`<pre class="args" id="lock-info">${shown(d.infoRaw)}</pre>`
      : html`<p class="empty" id="lock-info">No lock information (the gem writes it with <code>SidekiqUniqueJobs.config.lock_info = true</code>)</p>`
}
<table class="jobs" id="lock-locked"><caption>Locked JIDs${d.since !== undefined ? html` · in the digests set since ${utcTime(d.since > 1e11 ? d.since / 1000 : d.since)}` : " · not in the digests set"}</caption>
<thead><tr><th>JID</th><th>Since / metadata</th></tr></thead><tbody>
${d.locked.map(([jid, v]) => html`<tr data-jid="${jid}"><td><code>${shown(jid, 100)}</code></td><td>${/^\d+(\.\d+)?$/.test(v) ? since(Number(v), now) : html`<code>${shown(v, 500)}</code>`}</td></tr>`)}
${d.locked.length === 0 ? html`<tr><td colspan="2">No job holds this lock</td></tr>` : ""}
</tbody></table>
${d.queued.length + d.primed.length > 0 ? html`<p>Queued: <code>${shown(d.queued.join(", "), 1000)}</code> · Primed: <code>${shown(d.primed.join(", "), 1000)}</code></p>` : ""}
${
  d.changelog.length > 0
    ? html`<table class="jobs" id="lock-changelog"><caption>Changelog</caption><thead><tr><th>At</th><th>Digest</th><th>JID</th><th>Message</th><th>Script</th></tr></thead><tbody>${changelogRows(d.changelog, now)}</tbody></table>`
    : ""
}
<p><a href="${href(w, "/locks")}">Back to the locks</a></p>
</section>`;
}

export async function changelogsPage(w: WebRequest): Promise<Html> {
  const filter = w.query.get("filter") ?? "";
  const { count } = paging(w.query, 100);
  const cursor = cursorValue(w.query.get("cursor"));
  const p = await changelogPage(w.api.redis, filter, cursor, count);
  const now = w.api.now();
  return html`<section>
<header class="section-head"><h1>Changelogs</h1><span>${delimited(p.total)} entries</span>
<form method="get" action="${href(w, "/locks/changelogs")}" class="filter"><input type="search" name="filter" value="${filter}" placeholder="Filter" maxlength="500"><button class="btn">Filter</button></form>
${p.total > 0 ? form(w, "/locks/changelogs/delete-all", html`<button class="btn danger" data-action="delete-all" data-confirm="Clear the changelog?">Clear</button>`) : ""}
</header>
<table class="jobs" id="changelogs"><thead><tr><th>At</th><th>Digest</th><th>JID</th><th>Message</th><th>Script</th></tr></thead>
<tbody>${changelogRows(p.entries, now)}${p.entries.length === 0 ? html`<tr><td colspan="5">No entries found</td></tr>` : ""}</tbody></table>
${p.cursor !== "0" ? html`<ul class="pagination"><li><a href="${href(w, "/locks/changelogs", { filter, cursor: p.cursor })}" rel="next">More</a></li></ul>` : ""}
</section>`;
}
