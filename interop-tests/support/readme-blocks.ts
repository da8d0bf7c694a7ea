// README's runnable code, read from README.md itself: every block marked
// ```ts runnable=<name>, by name. Tests run these texts as written, so a
// change to README that breaks an example fails the suite.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../harness/local-backend.js";

/** README's runnable blocks, name to code, in README's order. */
export function readmeBlocks(readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8")): Map<string, string> {
  return new Map([...readme.matchAll(/^```ts runnable=([\w-]+)\n([\s\S]*?)^```$/gm)].map((m) => [m[1]!, m[2]!]));
}
