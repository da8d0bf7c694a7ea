// The Cron tab's POSTs, as sidekiq-cron's Web UI routes them: enqueue,
// enable, disable or delete one job (`/cron/namespaces/:ns/jobs/:name/:action`)
// or every job of a namespace (`/cron/namespaces/:ns/all/:action`). A job
// that no longer exists is skipped, as Ruby's `if job = Job.find(...)` does.
import { Client } from "../../../core/client/client.js";
import { CronApi } from "../cron-api.js";
import { ActionError, href, type WebRequest } from "../../../tools/web/extension.js";
import { cronJobPath, namespacePath } from "./pages.js";

const ACTIONS = ["enqueue", "enable", "disable", "delete"] as const;
type CronAction = (typeof ACTIONS)[number];

function cronAction(name: string | undefined): CronAction {
  if (!ACTIONS.includes(name as CronAction)) throw new ActionError(`unknown cron action "${name ?? ""}"`);
  return name as CronAction;
}

/**
 * A CronApi that can push (Enqueue Now), closed after the action. Its client
 * writes the live fleet's dialect, or with no Ruby process live the release
 * the dashboard reads as.
 */
async function withCron<T>(w: WebRequest, f: (cron: CronApi) => Promise<T>): Promise<T> {
  const client = new Client({ redis: w.api.redis, validate: false, autoFallback: w.api.rules.version });
  try {
    return await f(new CronApi({ redis: w.api.redis, client, now: () => w.api.now() }));
  } finally {
    await client.close();
  }
}

async function act(cron: CronApi, action: CronAction, name: string, ns: string): Promise<void> {
  if (!(await cron.find(name, ns))) return;
  if (action === "enqueue") await cron.enqueue(name, ns);
  else if (action === "enable") await cron.enable(name, ns);
  else if (action === "disable") await cron.disable(name, ns);
  else await cron.destroy(name, ns);
}

/** One job: back to its page when the form came from there (and the job still exists), else to its namespace. */
export async function cronJobAction(w: WebRequest): Promise<string> {
  const [ns, name, a] = [w.params[0]!, w.params[1]!, w.params[2]];
  const action = cronAction(a);
  await withCron(w, (cron) => act(cron, action, name, ns));
  if (w.form.get("back") === "job" && action !== "delete") return href(w, cronJobPath(ns, name));
  return href(w, namespacePath(ns));
}

/** Every readable job of the namespace (`Job.all(namespace).each(&:action)`). */
export async function cronAllAction(w: WebRequest): Promise<string> {
  const [ns, a] = [w.params[0]!, w.params[1]];
  const action = cronAction(a);
  await withCron(w, async (cron) => {
    for (const job of await cron.all(ns)) await act(cron, action, job.name, job.namespace);
  });
  return href(w, namespacePath(ns));
}
