// `migrate audit` and the contract: a queue whose classes have a Node handler
// that accepts other arguments than the Ruby class's perform is BLOCKED, with
// the difference; a handler that declares no schema is listed as unchecked.
// The Ruby contract comes from the handlers module (`export const contract =
// "sidekiq-contract.json"`, or contracts already read); the handlers' schemas
// from their register options. Without a Ruby contract this check says nothing.
import type { AuditCheck } from "../migration/extension.js";
import type { ClassUsage, NodeHandlers } from "../migration/extension.js";
import { readContractFile, type JobContract } from "./document.js";
import { signatureDifference } from "./drift.js";
import { handlerClass, type HandlerContract } from "../../core/contract/handlers.js";

interface Seen {
  ruby: JobContract[];
  node: Map<string, HandlerContract | undefined>;
}

const seen = new WeakMap<NodeHandlers, Seen>();
const verdicts = new WeakMap<ClassUsage, { reason?: string; warning?: string }>();

function of(into: NodeHandlers): Seen {
  let s = seen.get(into);
  if (!s) seen.set(into, (s = { ruby: [], node: new Map() }));
  return s;
}

function contractsOf(value: unknown): JobContract[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => (typeof v === "string" ? readContractFile(v) : (v as JobContract)));
}

/** What each handler recorded into `into` declared at register (for contract export and check). */
export function contractHandlers(into: NodeHandlers): ReadonlyMap<string, HandlerContract | undefined> {
  return seen.get(into)?.node ?? new Map();
}

export const contractAuditCheck: AuditCheck = {
  onModule(mod, into) {
    const value = mod && typeof mod === "object" ? (mod as { contract?: unknown }).contract : undefined;
    if (value !== undefined) of(into).ruby.push(...contractsOf(value));
  },
  onRegister(name, options, into) {
    of(into).node.set(name, (options as { contract?: HandlerContract } | undefined)?.contract);
  },
  initUsage(usage, handlers) {
    const s = seen.get(handlers);
    if (!s || s.ruby.length === 0 || !usage.handled || !s.node.has(usage.name)) return;
    const defs = s.ruby
      .map((c) => c.classes[usage.name])
      .filter((d) => d !== undefined && d.unchecked === undefined && (d.kind === "activejob") === usage.activeJob);
    if (defs.length === 0) return;
    const declared = s.node.get(usage.name);
    if (!declared?.args) {
      verdicts.set(usage, {
        warning: `${usage.name}: unchecked, its Node handler declares no argument schema (register's contract.args)`,
      });
      return;
    }
    const node = handlerClass(declared);
    const diffs = defs.map((d) => signatureDifference(d!, node));
    if (diffs.every((d) => d !== undefined))
      verdicts.set(usage, { reason: `${usage.name}: the Node handler differs from the Ruby class: ${diffs[0]}` });
  },
  judgeClass(c, out) {
    const v = verdicts.get(c);
    if (v?.reason) out.reasons.push(v.reason);
    if (v?.warning) out.warnings.push(v.warning);
    return undefined;
  },
};
