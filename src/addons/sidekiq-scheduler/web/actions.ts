// The Recurring Jobs tab's POSTs, on the gem's routes: enqueue one schedule
// now or toggle it (`/recurring-jobs/:name/enqueue|toggle`), and enable or
// disable every schedule (`/recurring-jobs/toggle-all`, action=enable|disable).
import { Client } from "../../../core/client/client.js";
import { ActionError, href, type WebRequest } from "../../../tools/web/extension.js";
import { SchedulerApi } from "../scheduler-api.js";

export async function recurringJobAction(w: WebRequest): Promise<string> {
  const [name, action] = [w.params[0]!, w.params[1]];
  if (action === "toggle") {
    await new SchedulerApi({ redis: w.api.redis, now: () => w.api.now() }).toggle(name);
  } else if (action === "enqueue") {
    // The live fleet's dialect, or with no Ruby process live the release the dashboard reads as.
    const client = new Client({ redis: w.api.redis, validate: false, autoFallback: w.api.rules.version });
    try {
      const api = new SchedulerApi({ redis: w.api.redis, client, now: () => w.api.now() });
      if (await api.find(name)) await api.enqueue(name);
    } finally {
      await client.close();
    }
  } else throw new ActionError(`unknown recurring job action "${action ?? ""}"`);
  return href(w, "/recurring-jobs");
}

export async function toggleAllAction(w: WebRequest): Promise<string> {
  await new SchedulerApi({ redis: w.api.redis, now: () => w.api.now() }).setAllEnabled(
    w.form.get("action") === "enable",
  );
  return href(w, "/recurring-jobs");
}
