// The Node side of the contract: what a handler declares at register
// (`worker.register("Greeter", fn, { contract: { args, options } })`), read
// from a handlers module without Redis, and written in the contract's shape
// by `contract export`. The arguments are a JSON Schema of the args array
// (prefixItems, one per parameter, named by `title`; minItems: how many are
// required; items: the splat), the language ajv and the contract already use.
// A schema library (zod, typebox) would add a dependency for what a literal
// schema says; it can emit JSON Schema for this option.
import type { JobOptions } from "../client/normalize.js";
import type { JobClass, JobContract, Parameter } from "./generated/contract.js";

/** A JSON Schema of a job's args array. */
export interface ArgsSchema {
  type?: "array";
  /** One schema per parameter, in order; `title` names it. */
  prefixItems?: ReadonlyArray<Record<string, unknown> & { title?: string }>;
  /** How many of prefixItems are required (default: all of them). */
  minItems?: number;
  /** The splat's schema; false or absent: no more arguments. */
  items?: Record<string, unknown> | boolean;
  [keyword: string]: unknown;
}

/** What a handler declares at register, under the option `contract`. */
export interface HandlerContract {
  /** The arguments it accepts. Without it the handler is listed, unchecked. */
  args?: ArgsSchema;
  /** The options a Ruby stub pushes with (queue, retry...). */
  options?: JobOptions;
}

/** The parameters an args schema declares, in the contract's shape. */
export function paramsFromArgsSchema(schema: ArgsSchema): Parameter[] {
  const items = schema.prefixItems ?? [];
  const required = schema.minItems ?? items.length;
  const params: Parameter[] = items.map((s, i) => {
    const { title, ...rest } = s;
    const p: Parameter = { name: typeof title === "string" ? title : `arg${i}`, kind: i < required ? "req" : "opt" };
    if (Object.keys(rest).length > 0) p.schema = rest;
    return p;
  });
  if (schema.items !== undefined && schema.items !== false) {
    const p: Parameter = { name: "args", kind: "rest" };
    if (typeof schema.items === "object" && Object.keys(schema.items).length > 0) p.schema = schema.items;
    params.push(p);
  }
  return params;
}

/** A registered handler as the contract describes it. */
export function handlerClass(declared: HandlerContract | undefined): JobClass {
  const def: JobClass = { kind: "node" };
  if (declared?.args) {
    def.params = paramsFromArgsSchema(declared.args);
    def.types = "json-schema";
  } else def.unchecked = "the handler declares no argument schema (register's contract.args)";
  if (declared?.options) def.options = declared.options;
  return def;
}

/** The handlers' contract: every registered class, declared or not. */
export function exportContract(app: string, handlers: ReadonlyMap<string, HandlerContract | undefined>): JobContract {
  const classes: Record<string, JobClass> = {};
  for (const [name, declared] of [...handlers].sort(([a], [b]) => a.localeCompare(b)))
    classes[name] = handlerClass(declared);
  return { contract: 1, app, source: { side: "node", types: "json-schema" }, classes };
}
