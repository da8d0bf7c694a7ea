// Cron: sidekiq-cron's Web UI tab. Every namespace with its job count, the
// jobs of one namespace (status, name, cron, class, queue, last enqueue time,
// next fire time) with Enqueue Now / Enable / Disable / Delete for one job or
// all, and one job's details with its jid history. Read through CronApi on
// the gem's own keys, so it lists what `Sidekiq::Cron::Job.all` lists.
import type { CronWebSettings } from "./settings.js";
import { CronApi } from "../cron-api.js";
import type { CronJob } from "../cron-job.js";
import { DEFAULT_NAMESPACE } from "../keys.js";
import {
  delimited,
  form,
  href,
  html,
  type Html,
  relativeTime,
  shown,
  utcTime,
  type WebRequest,
} from "../../../tools/web/extension.js";

export function cronApi(w: WebRequest): CronApi {
  return new CronApi({ redis: w.api.redis, now: () => w.api.now() });
}

export const namespacePath = (ns: string) => `/cron/namespaces/${encodeURIComponent(ns)}`;
export const cronJobPath = (ns: string, name: string) => `${namespacePath(ns)}/jobs/${encodeURIComponent(name)}`;

/** Ruby's `sort_name`: enabled jobs first, then by name, case-insensitive. */
function sortName(j: CronJob): string {
  return `${j.status === "enabled" ? 0 : 1}_${j.name}`.toLowerCase();
}

/** A cron line kept on one line, as Ruby's view does with &nbsp;. */
const nowrap = (cron: string) => cron.replace(/ /g, "\u00a0");

function nextFire(j: CronJob, now: number): Date | null {
  if (j.status !== "enabled") return null;
  try {
    return j.parsedCron().nextTime(new Date(now));
  } catch {
    return null;
  }
}

function when(d: Date | null | undefined, now: number): Html {
  if (!d) return html`-`;
  return html`<span title="${utcTime(d.getTime() / 1000)}">${relativeTime(d.getTime() / 1000, now)}</span>`;
}

/** Enqueue Now, then Disable for an enabled job or Enable and Delete for a disabled one (as Ruby's view). */
function jobButtons(w: WebRequest, j: CronJob, back?: string): Html {
  const path = cronJobPath(j.namespace, j.name);
  const backField = back ? html`<input type="hidden" name="back" value="${back}">` : "";
  const button = (action: string, label: string, cls: string, confirm?: string) =>
    form(
      w,
      `${path}/${action}`,
      html`${action === "delete" ? "" : backField}<button class="btn ${cls}" data-action="${action}"${confirm ? html` data-confirm="${confirm}"` : ""}>${label}</button>`,
    );
  return html`${button("enqueue", "Enqueue Now", "", `Enqueue cron job "${j.name}" now?`)}${
    j.status === "enabled"
      ? button("disable", "Disable", "")
      : html`${button("enable", "Enable", "")}${button("delete", "Delete", "danger", `Delete cron job "${j.name}"?`)}`
  }`;
}

export async function cronPage(w: WebRequest): Promise<Html> {
  const ns = w.params[0] ?? DEFAULT_NAMESPACE;
  const cron = cronApi(w);
  // Like Namespace.all: the configured ones (or all found) and "default".
  const given = (w.extensions.get("cron") as CronWebSettings | undefined)?.namespaces;
  const namespaces = given ? [...new Set([...given, DEFAULT_NAMESPACE])].sort() : await cron.namespaces();
  const counts = await Promise.all(namespaces.map((n) => cron.count(n)));
  const { jobs, unreadable } = await cron.list(ns);
  jobs.sort((a, b) => (sortName(a) < sortName(b) ? -1 : sortName(a) > sortName(b) ? 1 : 0));
  const now = w.api.now();
  const all = (action: string, label: string, cls: string, confirm?: string) =>
    form(
      w,
      `${namespacePath(ns)}/all/${action}`,
      html`<button class="btn ${cls}" data-action="${action}-all"${confirm ? html` data-confirm="${confirm}"` : ""}>${label}</button>`,
    );
  return html`<section>
<header class="section-head"><h1>Cron Jobs <small class="title">(${shown(ns, 200)})</small></h1>
${
  jobs.length > 0
    ? html`<div class="actions">${all("delete", "Delete All", "danger", "Delete every cron job of this namespace?")}${all("disable", "Disable All", "")}${all("enable", "Enable All", "")}${all("enqueue", "Enqueue All", "", "Enqueue every cron job of this namespace now?")}</div>`
    : ""
}
</header>
<div class="cards" id="cron-namespaces">
${namespaces.map(
  (n, i) =>
    html`<article${n === ns ? html` class="active"` : ""}><a href="${href(w, namespacePath(n))}"><span class="count">${delimited(counts[i]!)}</span><span class="desc">${shown(n, 200)}</span></a></article>`,
)}
</div>
${
  jobs.length > 0
    ? html`<table class="jobs" id="cron-jobs"><thead><tr><th>Status</th><th>Name</th><th>Cron</th><th>Class</th><th>Queue</th><th>Last Enqueued</th><th>Next</th><th>Actions</th></tr></thead>
<tbody>
${jobs.map(
  (
    j,
  ) => html`<tr data-cron-job="${j.name}" data-status="${j.status}"${j.status === "disabled" ? html` class="disabled"` : ""}>
<td><span class="badge ${j.status === "enabled" ? "" : "quiet"}">${j.status}</span></td>
<td><a href="${href(w, cronJobPath(j.namespace, j.name))}" title="${j.description ?? ""}"><b>${shown(j.name, 200)}</b></a><br><small><code class="args">${shown(j.message, 100)}</code></small></td>
<td><code>${nowrap(j.cron)}</code></td><td>${shown(j.klass, 200)}</td><td>${shown(j.queue, 200)}</td>
<td data-col="last">${when(j.lastEnqueueTime, now)}</td><td data-col="next">${when(nextFire(j, now), now)}</td>
<td>${jobButtons(w, j)}</td></tr>`,
)}
</tbody></table>`
    : html`<p class="empty" id="cron-empty">No cron jobs were found</p>`
}
${
  unreadable.length > 0
    ? html`<h2>Unreadable entries</h2><table class="jobs" id="cron-unreadable"><thead><tr><th>Key</th><th>Error</th></tr></thead><tbody>${unreadable.map(
        (u) => html`<tr><td><code>${shown(u.key, 300)}</code></td><td>${shown(u.error, 500)}</td></tr>`,
      )}</tbody></table>`
    : ""
}
</section>`;
}

export async function cronJobPage(w: WebRequest): Promise<Html> {
  const [ns, name] = [w.params[0]!, w.params[1]!];
  const cron = cronApi(w);
  const job = await cron.find(name, ns);
  if (!job)
    return html`<section><header class="section-head"><h1>Cron Job <small class="title">${shown(name, 200)}</small></h1></header>
<p class="empty">No cron job with this name in namespace ${shown(ns, 200)}. <a href="${href(w, namespacePath(ns))}">Back to the cron jobs</a></p></section>`;
  const history = await cron.jidHistory(name, ns);
  const now = w.api.now();
  const row = (label: string, value: Html | string) => html`<tr><th>${label}</th><td>${value}</td></tr>`;
  let message = job.message;
  try {
    message = JSON.stringify(JSON.parse(job.message), null, 2);
  } catch {
    // Shown as stored.
  }
  return html`<section>
<header class="section-head"><h1>Cron Job <small class="title">${shown(name, 200)}</small></h1>
<div class="actions">${jobButtons(w, job, "job")}</div></header>
<table class="detail" id="cron-job"><tbody>
${row("Status", html`<span data-col="status">${job.status}</span>`)}
${row("Name", shown(job.name, 500))}
${row("Namespace", shown(job.namespace, 200))}
${row("Description", shown(job.description, 1000))}
${row("Class", shown(job.klass, 500))}
${row("Queue", shown(job.queue, 200))}
${row("Message", html`<pre class="args">${shown(message)}</pre>`)}
${row("Cron", html`<code>${nowrap(job.cron)}</code>`)}
${row("Last enqueued", when(job.lastEnqueueTime, now))}
${row("Next", when(nextFire(job, now), now))}
</tbody></table>
<h2>History</h2>
${
  history.length > 0
    ? html`<table class="jobs" id="cron-history"><thead><tr><th>Enqueued</th><th>JID</th></tr></thead><tbody>${history.map(
        (h) =>
          html`<tr><td>${shown(String(h.enqueued), 100)}</td><td><code>${shown(h.jid ?? "-", 100)}</code></td></tr>`,
      )}</tbody></table>`
    : html`<p class="empty">No history was found</p>`
}
<p><a href="${href(w, namespacePath(ns))}">Back to the cron jobs</a></p>
</section>`;
}
