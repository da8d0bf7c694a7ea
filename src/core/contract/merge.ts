// Several apps' contracts on one Redis, as the client's checker holds them:
// the document's type (generated from schema/contract/) and the merge by
// class name. Reading and writing a contract file is the contract tool's
// (src/tools/contract/document.ts); the core needs only what a push is
// checked against.
import type { JobClass, JobContract } from "./generated/contract.js";

/** A contract file that is not a contract, or not this format; or two contracts with one app name. */
export class ContractFileError extends Error {
  override name = "ContractFileError";
}

/** One class of one app: what a merged set of contracts holds under a class name. */
export interface AppClass {
  app: string;
  def: JobClass;
}

/**
 * Several apps' contracts on one Redis: class name -> its definition in each
 * app that has it. An app name may appear once (it is the namespace).
 */
export function mergeContracts(contracts: readonly JobContract[]): Map<string, AppClass[]> {
  const apps = new Set<string>();
  const out = new Map<string, AppClass[]>();
  for (const c of contracts) {
    if (apps.has(c.app))
      throw new ContractFileError(
        `two contracts are named "${c.app}": each app sharing the Redis needs its own name (contract pull --app)`,
      );
    apps.add(c.app);
    for (const [name, def] of Object.entries(c.classes)) {
      const list = out.get(name);
      if (list) list.push({ app: c.app, def });
      else out.set(name, [{ app: c.app, def }]);
    }
  }
  return out;
}
