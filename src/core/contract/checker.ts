// Checked pushes: the client asks the checker about every job before anything
// reaches Redis. Each class's signature is compiled once, when the client is
// made (one Ajv for the typed parameters); a push costs a Map lookup and a
// few comparisons, plus one compiled validator per typed value in "strict".
import { createRequire } from "node:module";
import type Ajv2020Module from "ajv/dist/2020.js";
import type { ActiveJobOptions } from "../client/activejob.js";
import type { JobOptions } from "../client/normalize.js";
import type { JobContract } from "./generated/contract.js";
import { mergeContracts, type AppClass } from "./merge.js";
import type { ActiveJobDefaults } from "./generated/contract.js";
import { Signature, type CallProblem, type SchemaCompiler } from "./signature.js";

/**
 * What a push that breaks the contract does. "warn" (the default) pushes and
 * warns once per class and problem; "error" refuses what Ruby would refuse
 * with ArgumentError (unknown class, arity, keywords) and warns about types;
 * "strict" also refuses values that break an RBS signature.
 */
export type ContractMode = "warn" | "error" | "strict";

/** The `contract` option of `Client`. */
export interface ContractOptions {
  /** One app's contract, or several apps sharing this Redis (one namespace each, by `app`). */
  contracts: JobContract | readonly JobContract[];
  mode?: ContractMode;
  /** Classes pushed without a check: not in the contract (another app's), or known to differ. */
  unchecked?: readonly (string | RegExp)[] | ((className: string) => boolean);
}

/** A push the contract refuses: names the class, the parameter and what was given. */
export class ContractError extends Error {
  override name = "ContractError";
  constructor(
    message: string,
    readonly className: string,
    readonly problem: CallProblem | { rule: "unknown-class"; message: string },
  ) {
    super(message);
  }
}

const requireHere = createRequire(import.meta.url);

let compiler: SchemaCompiler | undefined;

/** One Ajv for every checker; a schema seen before (the same RBS type) is compiled once. */
function schemaCompiler(): SchemaCompiler {
  if (compiler) return compiler;
  const Ajv2020 = (requireHere("ajv/dist/2020.js") as typeof Ajv2020Module).default;
  // Schemas come from RBS or a handler: not strict about them, and never coerce.
  const ajv = new Ajv2020({ strict: false, allowUnionTypes: true });
  const compiled = new Map<string, ReturnType<SchemaCompiler>>();
  compiler = (schema) => {
    const key = JSON.stringify(schema);
    let fn = compiled.get(key);
    if (!fn) compiled.set(key, (fn = ajv.compile(typeof schema === "boolean" ? schema : { ...schema })));
    return fn;
  };
  return compiler;
}

interface Entry {
  app: string;
  signature?: Signature;
  /** The contract marks it unchecked (why), or it has no perform to read. */
  unchecked?: string;
  queue?: string;
}

/** The job deliver_later enqueues; its arguments name a mailer action the contract lists as "Mailer#action". */
const MAIL_DELIVERY_JOB = "ActionMailer::MailDeliveryJob";

/** ActiveJob's argument markers, stripped before a value is compared with a type. */
const AJ_MARKERS = ["_aj_symbol_keys", "_aj_ruby2_keywords", "_aj_hash_with_indifferent_access"];

function isPlain(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function unmarked(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(unmarked);
  if (!isPlain(v) || "_aj_serialized" in v || "_aj_globalid" in v) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (!AJ_MARKERS.includes(k)) out[k] = unmarked(x);
  return out;
}

/** The checker behind `new Client({ contract })`. */
export class ContractChecker {
  readonly mode: ContractMode;
  private readonly classes = new Map<string, Entry[]>();
  private readonly defs: Map<string, AppClass[]>;
  private readonly skip: (className: string) => boolean;
  private readonly warned = new Set<string>();
  /** Several apps' contracts: messages name the app. */
  private readonly apps: string[];
  /** Each app's locale and Time.zone, as its own ActiveJob payloads carry them. */
  private readonly ajDefaults = new Map<string, ActiveJobDefaults>();
  /** Mailer class -> the app whose contract lists its actions (the first). */
  private readonly mailerApps = new Map<string, string>();

  constructor(
    options: ContractOptions,
    private readonly warn: (message: string) => void,
  ) {
    this.mode = options.mode ?? "warn";
    if (!["warn", "error", "strict"].includes(this.mode))
      throw new TypeError(`contract mode must be "warn", "error" or "strict", not ${JSON.stringify(this.mode)}`);
    const list = Array.isArray(options.contracts) ? options.contracts : [options.contracts as JobContract];
    this.apps = list.map((c) => c.app);
    for (const c of list) if (c.activejob_defaults) this.ajDefaults.set(c.app, c.activejob_defaults);
    const compile = schemaCompiler();
    this.defs = mergeContracts(list);
    for (const [name, defs] of this.defs) {
      const mailer = defs.find((d) => d.def.kind === "mailer");
      const cls = name.split("#")[0]!;
      if (mailer && !this.mailerApps.has(cls)) this.mailerApps.set(cls, mailer.app);
    }
    for (const [name, defs] of this.defs)
      this.classes.set(
        name,
        defs.map((d) => this.entry(name, d, compile)),
      );
    const u = options.unchecked;
    this.skip =
      typeof u === "function"
        ? u
        : u === undefined || u.length === 0
          ? () => false
          : (name) => u.some((p) => (typeof p === "string" ? p === name : p.test(name)));
  }

  private entry(name: string, { app, def }: AppClass, compile: SchemaCompiler): Entry {
    const queue = def.kind === "activejob" ? (def.activejob?.queue ?? undefined) : def.options?.queue;
    const base = { app, ...(queue ? { queue } : {}) };
    if (def.unchecked !== undefined) return { ...base, unchecked: def.unchecked };
    if (def.params === undefined) return { ...base, unchecked: "the contract lists no parameters" };
    return { ...base, signature: new Signature(name, def, compile) };
  }

  /** A Sidekiq class's sidekiq_options from the contract (its first app's), as a push copies them. */
  jobOptions(className: string): JobOptions | undefined {
    const def = this.defs.get(className)?.find((d) => d.def.kind === "sidekiq")?.def;
    return def?.options as JobOptions | undefined;
  }

  /** An ActiveJob class's queue_as, priority and sidekiq_options from the contract. */
  activeJobOptions(className: string): ActiveJobOptions | undefined {
    const def = this.defs.get(className)?.find((d) => d.def.kind === "activejob")?.def;
    if (!def) return undefined;
    const a = def.activejob ?? {};
    return {
      ...(typeof a.queue === "string" ? { queue: a.queue } : {}),
      ...(typeof a.priority === "number" ? { priority: a.priority } : {}),
      ...(def.options ? { sidekiqOptions: def.options as JobOptions } : {}),
    };
  }

  /**
   * The locale and time zone that the app owning this ActiveJob class (or
   * mailer: any of its "Mailer#action" entries) writes in every payload; {} when
   * the contract does not say.
   */
  appDefaults(
    className: string,
    kind: "activejob" | "mailer" = "activejob",
  ): Pick<ActiveJobOptions, "locale" | "timezone"> {
    const app =
      kind === "activejob"
        ? this.defs.get(className)?.find((d) => d.def.kind === "activejob")?.app
        : this.mailerApps.get(className);
    const d = app === undefined ? undefined : this.ajDefaults.get(app);
    return d ? { locale: d.locale, timezone: d.timezone } : {};
  }

  /** The apps whose contract has this class. */
  appsOf(className: string): string[] {
    return (this.classes.get(className) ?? []).map((e) => e.app);
  }

  /**
   * The app a push belongs to, as the check decides it: of a class several
   * apps have, the one whose queue the push names, else the first; a mail,
   * its mailer's app. Undefined for a class no contract lists.
   */
  appOfPush(item: { class?: unknown; wrapped?: unknown; args?: unknown; queue?: unknown }): string | undefined {
    const className = typeof item.wrapped === "string" ? item.wrapped : item.class;
    if (typeof className !== "string") return undefined;
    if (className === MAIL_DELIVERY_JOB && Array.isArray(item.args) && isPlain(item.args[0])) {
      const list = item.args[0].arguments;
      const app = Array.isArray(list) ? this.mailerApps.get(String(list[0])) : undefined;
      if (app !== undefined) return app;
    }
    const entries = this.classes.get(className);
    return (entries?.find((e) => e.queue === item.queue) ?? entries?.[0])?.app;
  }

  /**
   * Checks one push: a Sidekiq job's args, or an ActiveJob wrapper's (its
   * class is `wrapped`, its arguments in args[0].arguments). Throws a
   * ContractError or warns, by mode; returns nothing.
   */
  checkPush(item: { class?: unknown; wrapped?: unknown; args?: unknown; queue?: unknown }): void {
    const aj = typeof item.wrapped === "string" && Array.isArray(item.args) && isPlain(item.args[0]);
    const className = aj ? (item.wrapped as string) : item.class;
    if (typeof className !== "string" || !Array.isArray(item.args)) return; // normalize says what is wrong
    if (aj) {
      const body = item.args[0] as Record<string, unknown>;
      const list = Array.isArray(body.arguments) ? (body.arguments as unknown[]) : [];
      const last = list[list.length - 1];
      const kw = isPlain(last) && Array.isArray(last._aj_ruby2_keywords) ? last : undefined;
      const positional = (kw ? list.slice(0, -1) : list).map(unmarked);
      // Rails' own delivery job is checked when the contract lists it (a pull that loaded ActionMailer does).
      if (className !== MAIL_DELIVERY_JOB || this.classes.has(className))
        this.check(className, positional, kw ? (unmarked(kw) as Record<string, unknown>) : undefined, item.queue);
      if (className === MAIL_DELIVERY_JOB) this.checkMail(list, kw);
    } else this.check(className, item.args, undefined, item.queue);
  }

  /** deliver_later's job: [mailer, action, "deliver_now", {params:, args:}], args checked against "Mailer#action". */
  private checkMail(list: readonly unknown[], kw: Record<string, unknown> | undefined): void {
    const [mailer, action] = list;
    if (typeof mailer !== "string" || typeof action !== "string" || !Array.isArray(kw?.args)) return;
    const args = kw.args as unknown[];
    const last = args[args.length - 1];
    const own = isPlain(last) && Array.isArray(last._aj_ruby2_keywords) ? last : undefined;
    const positional = (own ? args.slice(0, -1) : args).map(unmarked);
    this.check(`${mailer}#${action}`, positional, own ? (unmarked(own) as Record<string, unknown>) : undefined);
  }

  /** Checks every job of a bulk push (Sidekiq's push_bulk: one class, positional args only). */
  checkBulk(item: { class?: unknown; wrapped?: unknown; queue?: unknown }, lists: readonly unknown[]): void {
    if (typeof item.wrapped === "string") {
      for (const args of lists) this.checkPush({ ...item, args });
      return;
    }
    if (typeof item.class !== "string") return;
    for (const args of lists) if (Array.isArray(args)) this.check(item.class, args, undefined, item.queue);
  }

  /** Checks a call of `className`'s perform with these positional arguments and keywords. */
  check(className: string, positional: readonly unknown[], keywords?: Record<string, unknown>, queue?: unknown): void {
    const entries = this.classes.get(className);
    if (entries === undefined) {
      if (this.skip(className)) return;
      const apps = this.apps;
      const of = apps.length === 1 ? `the contract of ${apps[0]}` : `the contracts of ${apps.join(", ")}`;
      const msg = className.includes("#")
        ? `${className} is not a mailer action of ${of}: Ruby would raise NoMethodError when it delivers. Pull the contract again, or list it in the contract's unchecked classes`
        : `${className} is not a job class of ${of}: Ruby would raise NameError when it runs. Pull the contract again, or list it in the contract's unchecked classes`;
      this.report(className, msg, { rule: "unknown-class", message: msg }, true);
      return;
    }
    // Several apps with this class: the one whose queue the push names decides, else any that accepts.
    const ordered =
      entries.length > 1 && typeof queue === "string"
        ? [...entries.filter((e) => e.queue === queue), ...entries.filter((e) => e.queue !== queue)]
        : entries;
    const types = this.mode === "strict";
    let first: { e: Entry; p: CallProblem } | undefined;
    for (const e of ordered) {
      if (e.unchecked !== undefined || this.skip(className)) return;
      const p = e.signature!.check(positional, keywords, true);
      if (p === undefined) return;
      if (p.rule === "type" && !types) {
        // Ruby would run it: a type problem only warns below "strict".
        first ??= { e, p };
        continue;
      }
      first = first && first.p.rule !== "type" ? first : { e, p };
    }
    if (!first) return;
    const { e, p } = first;
    const where = this.apps.length > 1 ? ` (${e.app})` : "";
    const msg = `${className.includes("#") ? className : `${className}#perform`}${where} ${p.message}`;
    this.report(className, msg, p, p.rule !== "type" || types);
  }

  private report(className: string, msg: string, problem: ContractError["problem"], refusable: boolean): void {
    if (refusable && this.mode !== "warn") throw new ContractError(msg, className, problem);
    const key = `${className}\0${problem.rule}\0${"param" in problem ? problem.param : ""}`;
    if (this.warned.has(key)) return;
    this.warned.add(key);
    this.warn(`contract: ${msg}`);
  }
}
