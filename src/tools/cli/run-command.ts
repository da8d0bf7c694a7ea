// The body of every command: Ruby-like exit codes, and error messages with
// the Redis URL's secrets masked.
import { permissionLine } from "../../core/redis/acl.js";
import { UsageError } from "./errors.js";
import { scrub } from "./redis-url.js";

/**
 * Runs a command body with Ruby-like exit codes: a UsageError prints the
 * message and `Run 'sidekiq-bridge <cmd> --help'` (2), any other error its
 * message with the Redis URL masked (1).
 */
export async function runCommand(
  name: string,
  body: (ctx: { setUrl(u: string): void }) => Promise<number>,
): Promise<number> {
  let url: string | undefined;
  try {
    return await body({ setUrl: (u) => void (url = u) });
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    // An ACL refusal: the one line naming the permission, not Redis's reply.
    const msg = scrub(permissionLine(text, aclUser(url)) ?? text, url);
    if (e instanceof UsageError) {
      process.stderr.write(`sidekiq-bridge ${name}: ${msg}\nRun 'sidekiq-bridge ${name} --help' for usage.\n`);
      return 2;
    }
    process.stderr.write(`sidekiq-bridge ${name}: ${msg}\n`);
    return 1;
  }
}

/** The ACL user a Redis URL logs in as (undefined: the default user). */
function aclUser(url: string | undefined): string | undefined {
  try {
    return url === undefined ? undefined : decodeURIComponent(new URL(url).username) || undefined;
  } catch {
    return undefined;
  }
}
