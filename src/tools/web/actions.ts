// The dashboard's state-changing requests (POST only, checked for CSRF and
// Origin by the handler first). Each returns where to send the browser next.
import { BulkActionError, type BulkSummary } from "../../core/api/bulk-action.js";
import type { EntryAction, SortedEntry } from "../../core/api/sorted-entry.js";
import { entriesForKey } from "./set-entries.js";
import type { SetView } from "./pages/job-sets.js";
import { href, type WebRequest } from "./request.js";

export class ActionError extends Error {
  override name = "ActionError";
}

function entryAction(view: SetView, action: string | null): EntryAction {
  const found = view.actions.find(([a]) => a === action);
  if (!found) throw new ActionError(`unknown action "${action ?? ""}" for ${view.title}`);
  return found[0] as EntryAction;
}

/** One job or the selected ones: `key` fields of "<score>-<jid>", moved in atomic batches (bulk-action.ts). */
export async function setSelectedAction(w: WebRequest, view: SetView): Promise<string> {
  const action = entryAction(view, w.form.get("action"));
  const set = w.api.set(view.set);
  const entries: SortedEntry[] = [];
  for (const key of w.form.getAll("key")) entries.push(...(await entriesForKey(set, key)));
  const summary = await set.bulk(action, { entries }).catch(stoppedSummary);
  // As Ruby's Web UI: back to the list, unless some stayed (a failure, a middleware's refusal, a stop) and it must say why.
  return summary.failed + summary.refused > 0 || summary.interrupted
    ? resultHref(w, view, summary)
    : href(w, view.path);
}

/**
 * Every job, or every job matching the filter the page shows (its text and
 * class), in atomic batches that walk the set a slice at a time; then the
 * counts (bulk-result page).
 */
export async function setAllAction(w: WebRequest, view: SetView): Promise<string> {
  const action = entryAction(view, w.form.get("action"));
  const substr = w.form.get("substr") ?? "";
  const className = w.form.get("class") ?? "";
  const summary = await w.api
    .set(view.set)
    .bulk(action, {
      ...(substr !== "" ? { substr } : {}),
      ...(className !== "" ? { filter: { className } } : {}),
    })
    .catch(stoppedSummary);
  return resultHref(w, view, summary);
}

/** What an action Redis stopped at maxmemory did, with the reason, for the result page; any other error as it is. */
function stoppedSummary(e: unknown): BulkSummary & { stopped?: string } {
  if (!(e instanceof BulkActionError)) throw e;
  return { ...e.summary, stopped: e.message };
}

/** Where the browser sees what a bulk action did: its counts in the query, and the first failure's message. */
function resultHref(w: WebRequest, view: SetView, s: BulkSummary & { stopped?: string }): string {
  return href(w, `${view.path}/bulk-result`, {
    action: s.action,
    scope: s.scope,
    moved: s.moved,
    gone: s.gone,
    refused: s.refused,
    failed: s.failed,
    ms: s.elapsedMs,
    error: s.failures[0]?.error.slice(0, 300),
    stopped: s.stopped?.slice(0, 600),
  });
}

/** Quiet or Stop one process (`identity`), or every process. */
export async function busyAction(w: WebRequest): Promise<string> {
  const action = w.form.get("action");
  const identity = w.form.get("identity");
  const procs = identity
    ? [identity]
    : (await w.api.processes.list()).filter((p) => !p.embedded).map((p) => p.identity);
  for (const id of procs) {
    if (action === "quiet" || action === "quiet-all") await w.api.processes.quiet(id);
    else if (action === "stop" || action === "stop-all") await w.api.processes.stop(id);
    else throw new ActionError(`unknown action "${action ?? ""}" for Busy`);
  }
  return href(w, "/busy");
}

/** Clear a queue (`Queue#clear`). */
export async function clearQueueAction(w: WebRequest): Promise<string> {
  await w.api.queue(w.params[0]!).clear();
  return href(w, "/queues");
}

/** Delete one job from a queue: the entry at `index` if it still holds `jid`, else the first with that jid. */
export async function deleteQueueJobAction(w: WebRequest): Promise<string> {
  const name = w.params[0]!;
  const queue = w.api.queue(name);
  const jid = w.form.get("jid") ?? "";
  const index = Number(w.form.get("index"));
  const [entry] = Number.isInteger(index) && index >= 0 ? await queue.page(index, 1) : [];
  if (entry && (entry.jid ?? "") === jid) await queue.delete(entry);
  else if (jid !== "") await queue.deleteJob(jid);
  return href(w, `/queues/${encodeURIComponent(name)}`);
}
