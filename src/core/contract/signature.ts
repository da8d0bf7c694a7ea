// What Ruby does with a call to perform, decided in Node: the positional
// count (required, optional, splat, required after optional), required and
// unknown keywords, and, where the contract has types (RBS), each value's
// JSON Schema. The rules are Ruby 3's: keywords are keywords only when the
// caller passes them as such (ActiveJob does, Sidekiq never: a Hash in a
// Sidekiq job's args is always positional).
import type { ValidateFunction } from "ajv";
import type { JobClass, Parameter } from "./generated/contract.js";

/** Why a call would fail: `arity` and `keyword` raise ArgumentError in Ruby; `type` breaks only the signature. */
export interface CallProblem {
  rule: "arity" | "keyword" | "type";
  /** The parameter concerned, when there is one. */
  param?: string;
  message: string;
}

/** Compiles a JSON Schema once (the checker's one Ajv instance). */
export type SchemaCompiler = (schema: object | boolean) => ValidateFunction;

/** A short, bounded rendering of a value for an error message. */
export function shown(v: unknown): string {
  let s: string;
  try {
    s =
      JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? Number(x) : x === undefined ? "undefined" : x)) ??
      String(v);
  } catch {
    s = String(v);
  }
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** ajv knows JSON types only: bigint as Number, RubyFloat as its value (a copy; the push keeps the original). */
function jsonView(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(jsonView);
  const proto = Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null;
  if (proto && proto.constructor?.name === "RubyFloat") return (v as { value: number }).value;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = jsonView(x);
  return out;
}

interface Typed {
  name: string;
  type: string;
  ok: ValidateFunction;
}

/** One class's perform, compiled once: counts, keyword names, and a validator per typed parameter. */
export class Signature {
  private readonly lead: Parameter[] = [];
  private readonly opt: Parameter[] = [];
  private readonly post: Parameter[] = [];
  private readonly rest?: Parameter;
  private readonly keyreq: string[] = [];
  private readonly keys = new Set<string>();
  private readonly keywordParams = new Map<string, Parameter>();
  private readonly keyrest?: Parameter;
  private readonly nokey: boolean = false;
  private readonly typed = new Map<Parameter, Typed>();
  /** Whether any parameter has a schema (no type check otherwise). */
  readonly hasTypes: boolean;

  constructor(
    readonly className: string,
    readonly def: JobClass,
    compile?: SchemaCompiler,
  ) {
    let seenOpt = false;
    for (const p of def.params ?? []) {
      if (p.kind === "req") (seenOpt || this.rest ? this.post : this.lead).push(p);
      else if (p.kind === "opt") {
        seenOpt = true;
        this.opt.push(p);
      } else if (p.kind === "rest") this.rest = p;
      else if (p.kind === "keyreq" || p.kind === "key") {
        if (p.kind === "keyreq") this.keyreq.push(p.name);
        this.keys.add(p.name);
        this.keywordParams.set(p.name, p);
      } else if (p.kind === "keyrest") this.keyrest = p;
      else if (p.kind === "nokey") this.nokey = true;
      if (compile && p.schema !== undefined && p.kind !== "block")
        this.typed.set(p, { name: p.name, type: p.type ?? JSON.stringify(p.schema), ok: compile(p.schema) });
    }
    this.hasTypes = this.typed.size > 0;
  }

  private get acceptsKeywords(): boolean {
    return this.keys.size > 0 || this.keyrest !== undefined;
  }

  private get required(): number {
    return this.lead.length + this.post.length;
  }

  /** "2 arguments (user_id, template)", "1 to 3 arguments (...)", "at least 1 argument (...)". */
  describe(): string {
    const min = this.required;
    const max = this.rest ? Infinity : min + this.opt.length;
    const n = (k: number) => `${k} argument${k === 1 ? "" : "s"}`;
    const count = max === Infinity ? `at least ${n(min)}` : min === max ? n(min) : `${min} to ${n(max)}`;
    const names = [
      ...this.lead.map((p) => p.name),
      ...this.opt.map((p) => `${p.name}?`),
      ...(this.rest ? [`*${this.rest.name}`] : []),
      ...this.post.map((p) => p.name),
    ];
    return `${count} (${names.join(", ")})`;
  }

  /**
   * The first problem of a call with these positional arguments and keywords
   * (undefined: none passed), or undefined. `types`: also check values.
   */
  check(
    positional: readonly unknown[],
    keywords: Record<string, unknown> | undefined,
    types: boolean,
  ): CallProblem | undefined {
    if (keywords === undefined && this.def.kind === "sidekiq" && this.keyreq.length > 0)
      return {
        rule: "keyword",
        param: this.keyreq[0]!,
        message: `requires keyword ${this.keyreq.map((k) => `${k}:`).join(", ")}, which Sidekiq never passes (a JSON Hash arrives as a positional argument): every push of it raises ArgumentError`,
      };
    let args = positional;
    let kw = keywords !== undefined && Object.keys(keywords).length > 0 ? keywords : undefined;
    if (kw && !this.acceptsKeywords) {
      if (this.nokey) return { rule: "keyword", message: `accepts no keywords (**nil), given ${shown(kw)}` };
      // Ruby 3: keywords passed to a method without keywords arrive as a last positional Hash.
      args = [...positional, kw];
      kw = undefined;
    }
    const n = args.length;
    const min = this.required;
    const max = this.rest ? Infinity : min + this.opt.length;
    if (n < min || n > max) {
      const missing = n < min ? [...this.lead, ...this.post].slice(n).map((p) => p.name) : [];
      const what = n < min ? `; missing ${missing.join(", ")}` : `; ${n - max} too many`;
      return {
        rule: "arity",
        ...(missing[0] !== undefined ? { param: missing[0] } : {}),
        message: `takes ${this.describe()}, given ${n}: ${shown(args)}${what}`,
      };
    }
    // The common case, positional only: no keyword work, no allocation.
    if (kw === undefined && this.keyreq.length === 0)
      return types && this.hasTypes ? this.checkTypes(args, undefined) : undefined;
    const given = kw ?? {};
    const absent = this.keyreq.filter((k) => !Object.hasOwn(given, k));
    if (absent.length > 0) {
      return {
        rule: "keyword",
        param: absent[0]!,
        message: `missing keyword${absent.length > 1 ? "s" : ""} ${absent.map((k) => `${k}:`).join(", ")}`,
      };
    }
    if (!this.keyrest) {
      const unknown = Object.keys(given).filter((k) => !this.keys.has(k));
      if (unknown.length > 0)
        return {
          rule: "keyword",
          param: unknown[0]!,
          message: `unknown keyword${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => `${k}:`).join(", ")} (accepts ${[...this.keys].map((k) => `${k}:`).join(", ") || "none"})`,
        };
    }
    return types && this.hasTypes ? this.checkTypes(args, given) : undefined;
  }

  private checkTypes(args: readonly unknown[], kw: Record<string, unknown> | undefined): CallProblem | undefined {
    const n = args.length;
    const optUsed = Math.min(this.opt.length, n - this.required);
    const restEnd = n - this.post.length;
    // Positions: lead, the optionals given, the splat, then the required after them.
    for (let i = 0; i < n; i++) {
      const p =
        i < this.lead.length
          ? this.lead[i]!
          : i < this.lead.length + optUsed
            ? this.opt[i - this.lead.length]!
            : i < restEnd
              ? this.rest!
              : this.post[i - restEnd]!;
      const bad = this.typeProblem(p, args[i]);
      if (bad) return bad;
    }
    if (kw)
      for (const k in kw) {
        const p = this.keywordParams.get(k) ?? this.keyrest;
        const bad = p && this.typeProblem(p, kw[k]);
        if (bad) return bad;
      }
    return undefined;
  }

  private typeProblem(p: Parameter, v: unknown): CallProblem | undefined {
    const t = this.typed.get(p);
    if (t === undefined || t.ok(typeof v === "object" || typeof v === "bigint" ? jsonView(v) : v)) return undefined;
    return { rule: "type", param: p.name, message: `${p.name} must be ${t.type}, given ${shown(v)}` };
  }
}
