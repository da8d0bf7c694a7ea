// What a bulk action on retries, scheduled or dead jobs did, shown after it
// (the action redirects here with its counts in the query): how many jobs it
// moved, how many another process took meanwhile, how many a client
// middleware stopped or could not be acted on (both left in the set), and
// why it stopped when Redis refused a write at maxmemory (the rest is untouched).
import { delimited } from "../format.js";
import { html, shown, type Html } from "../html.js";
import { href, type WebRequest } from "../request.js";
import type { SetView } from "./job-sets.js";

const DONE: Record<string, string> = {
  retry: "retried",
  "add-to-queue": "added to their queues",
  kill: "moved to the dead set",
  delete: "deleted",
};

function count(w: WebRequest, name: string): number {
  const n = Number.parseInt(w.query.get(name) ?? "0", 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

export function bulkResultPage(w: WebRequest, view: SetView): Promise<Html> {
  const action = w.query.get("action") ?? "";
  const [moved, gone, refused, failed, ms] = (["moved", "gone", "refused", "failed", "ms"] as const).map((k) =>
    count(w, k),
  ) as [number, number, number, number, number];
  const error = w.query.get("error") ?? "";
  const stopped = w.query.get("stopped") ?? "";
  const which =
    w.query.get("scope") === "selected" ? "selected" : w.query.get("scope") === "filtered" ? "matching" : "";
  return Promise.resolve(html`<section id="bulk-result">
<header class="section-head"><h1>${view.title}</h1></header>
<p class="note"><strong id="bulk-moved">${delimited(moved)}</strong> ${which} job(s) ${DONE[action] ?? "acted on"} in ${(ms / 1000).toFixed(1)} s.</p>
<ul class="note">
${gone > 0 ? html`<li id="bulk-gone">${delimited(gone)} taken by another process meanwhile (left to it)</li>` : ""}
${refused > 0 ? html`<li id="bulk-refused">${delimited(refused)} stopped by client middleware, left in ${view.title}</li>` : ""}
${stopped ? html`<li id="bulk-stopped">Stopped: ${shown(stopped, 600)}</li>` : ""}
${failed > 0 ? html`<li id="bulk-failed">${delimited(failed)} could not be acted on, left in ${view.title}${error ? html`: ${shown(error, 300)}` : ""}</li>` : ""}
</ul>
<p><a class="btn" href="${href(w, view.path)}">Back to ${view.title}</a></p>
</section>`);
}
