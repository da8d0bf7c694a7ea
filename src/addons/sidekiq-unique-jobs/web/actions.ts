// The Locks tab's POSTs (the gem's Web UI uses GET links for these; here they
// are POSTs with the CSRF token like every other change): delete one lock,
// every lock, or clear the changelog.
import { CHANGELOG } from "../locksmith.js";
import { deleteAllLocks, deleteLock } from "../locks.js";
import { uniqueJobsConfig } from "./pages.js";
import { href, type WebRequest } from "../../../tools/web/extension.js";

export async function deleteLockAction(w: WebRequest): Promise<string> {
  await deleteLock(w.api.redis, w.params[0]!, uniqueJobsConfig(w));
  return href(w, "/locks");
}

export async function deleteAllLocksAction(w: WebRequest): Promise<string> {
  await deleteAllLocks(w.api.redis, uniqueJobsConfig(w));
  return href(w, "/locks");
}

/** `Changelog#clear`. */
export async function clearChangelogAction(w: WebRequest): Promise<string> {
  await w.api.redis.del(CHANGELOG);
  return href(w, "/locks/changelogs");
}
