// Recurring Jobs: sidekiq-scheduler's Web UI tab. Every schedule of the
// `schedules` hash, sorted by name as the gem's JobPresenter sorts them: name,
// queue, class, interval, arguments, enabled (the toggle, else the config),
// last and next trigger times (the gem's own hashes), with Enqueue now and
// Enable / Disable, and Enable all / Disable all.
import {
  form,
  href,
  html,
  type Html,
  relativeTime,
  shown,
  utcTime,
  type WebRequest,
} from "../../../tools/web/extension.js";
import { SchedulerApi } from "../scheduler-api.js";
import { intervalOf } from "../schedule-entry.js";

export function schedulerApi(w: WebRequest): SchedulerApi {
  return new SchedulerApi({ redis: w.api.redis, now: () => w.api.now() });
}

export const recurringJobPath = (name: string) => `/recurring-jobs/${encodeURIComponent(name)}`;

/** Reads the gem's `2026-11-26 14:41:30 +0000`; epoch ms or undefined. */
export function parseGemTime(s: string | undefined): number | undefined {
  const m = s ? /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d) ([+-])(\d\d)(\d\d)$/.exec(s) : null;
  if (!m) return undefined;
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  return wall - (m[7] === "-" ? -1 : 1) * (+m[8]! * 60 + +m[9]!) * 60_000;
}

function when(s: string | undefined, now: number, none: string): Html {
  const t = parseGemTime(s);
  if (t === undefined) return html`${none}`;
  return html`<span title="${utcTime(t / 1000)}">${relativeTime(t / 1000, now)}</span>`;
}

export async function recurringJobsPage(w: WebRequest): Promise<Html> {
  const api = schedulerApi(w);
  const { entries, unreadable } = await api.list();
  const { last, next } = await api.times();
  const enabled = await Promise.all(entries.map((e) => api.isEnabled(e).catch(() => e.enabledInConfig)));
  const now = w.api.now();
  const button = (path: string, label: string, action: string, value?: string) =>
    form(
      w,
      path,
      html`<button class="btn" data-action="${action}"${value ? html` name="action" value="${value}"` : ""}>${label}</button>`,
    );
  return html`<section>
<header class="section-head"><h1>Recurring Jobs</h1>
${entries.length > 0 ? html`<div class="actions">${button("/recurring-jobs/toggle-all", "Enable all", "enable-all", "enable")}${button("/recurring-jobs/toggle-all", "Disable all", "disable-all", "disable")}</div>` : ""}
</header>
${
  entries.length > 0
    ? html`<table class="jobs" id="recurring-jobs"><thead><tr><th>Name</th><th>Queue</th><th>Class</th><th>Interval</th><th>Arguments</th><th>Last Time</th><th>Next Time</th><th>Actions</th></tr></thead>
<tbody>
${entries.map(
  (
    e,
    i,
  ) => html`<tr data-schedule="${e.name}" data-enabled="${String(enabled[i])}"${enabled[i] ? "" : html` class="disabled"`}>
<td><b title="${e.description ?? ""}">${shown(e.name, 200)}</b>${e.description ? html`<br><small>${shown(e.description, 300)}</small>` : ""}</td>
<td><a href="${href(w, `/queues/${encodeURIComponent(e.queue)}`)}">${shown(e.queue, 200)}</a></td>
<td>${shown(e.className ?? "", 200)}</td><td><code>${shown(intervalOf(e), 200)}</code></td>
<td><code class="args">${shown(e.config.args === undefined ? "" : JSON.stringify(e.config.args), 200)}</code></td>
<td data-col="last">${when(last[e.name], now, "-")}</td><td data-col="next">${when(next[e.name], now, "No next execution time")}</td>
<td>${button(`${recurringJobPath(e.name)}/enqueue`, "Enqueue now", "enqueue")}${button(`${recurringJobPath(e.name)}/toggle`, enabled[i] ? "Disable" : "Enable", "toggle")}</td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty" id="recurring-jobs-empty">No recurring jobs were found</p>`
}
${
  unreadable.length > 0
    ? html`<h2>Unreadable entries</h2><table class="jobs" id="recurring-jobs-unreadable"><thead><tr><th>Name</th><th>Error</th></tr></thead><tbody>${unreadable.map(
        (u) => html`<tr><td><code>${shown(u.name, 300)}</code></td><td>${shown(u.error, 500)}</td></tr>`,
      )}</tbody></table>`
    : ""
}
</section>`;
}
