// The dashboard's state-changing requests (POST only, checked for CSRF and
// Origin by the handler first). Each returns where to send the browser next.
import type { EntryAction } from "../api/sorted-entry.js";
import { entriesForKey } from "./set-entries.js";
import { MAX_FILTER_MATCHES, type SetView } from "./pages/job-sets.js";
import { href, type WebRequest } from "./request.js";

export class ActionError extends Error {
  override name = "ActionError";
}

function entryAction(view: SetView, action: string | null): EntryAction {
  const found = view.actions.find(([a]) => a === action);
  if (!found) throw new ActionError(`unknown action "${action ?? ""}" for ${view.title}`);
  return found[0] as EntryAction;
}

/** One job or the selected ones: `key` fields of "<score>-<jid>". */
export async function setSelectedAction(w: WebRequest, view: SetView): Promise<string> {
  const action = entryAction(view, w.form.get("action"));
  const set = w.api.set(view.set);
  for (const key of w.form.getAll("key")) for (const e of await entriesForKey(set, key)) await set.act(action, e);
  return href(w, view.path);
}

/** Every job, or every job matching the filter the page shows. */
export async function setAllAction(w: WebRequest, view: SetView): Promise<string> {
  const action = entryAction(view, w.form.get("action"));
  const set = w.api.set(view.set);
  const substr = w.form.get("substr") ?? "";
  const className = w.form.get("class") ?? "";
  if (substr !== "") {
    // Repeated until nothing matches, so more than one screenful of matches is handled.
    for (;;) {
      const { entries } = await set.matching(substr, MAX_FILTER_MATCHES);
      let done = 0;
      for (const e of entries) if (await set.act(action, e)) done++;
      if (done === 0 || entries.length < MAX_FILTER_MATCHES) break;
    }
    return href(w, view.path);
  }
  const filter = className !== "" ? { className } : undefined;
  const res =
    action === "retry"
      ? await set.retryAll(filter)
      : action === "add-to-queue"
        ? await set.addAllToQueue(filter)
        : action === "kill"
          ? await set.killAll(filter)
          : await set.deleteAll(filter);
  if (res.failed.length > 0)
    throw new ActionError(`${res.failed.length} job(s) could not be moved: ${res.failed[0]!.error}`);
  return href(w, view.path);
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
