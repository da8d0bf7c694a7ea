// Sidekiq's Middleware::Chain, the one chain type of the client and the
// server: ordered entries that can be added, removed, asked for (`exists?`)
// and placed before or after another, and run around a push or a job, each
// calling next() at most once. Both sides use it, so it sits beside them,
// not in either. Sidekiq names an entry by its class; a function here may
// carry a name of its own (`named`), so a user who adds an add-on's
// middleware by hand is found by the name alone. A function's own name is not
// used for that: two modules' `const middleware = ...` would be taken for one.

/** Where a middleware's chain name is kept on the function. */
const NAME = Symbol.for("sidekiq-bridge.middleware-name");

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any middleware shape
type Fn = (...args: any[]) => unknown;

/** Gives `fn` its name in a chain (Sidekiq's class name, e.g. "SidekiqUniqueJobs::Middleware::Server"). */
export function named<M extends Fn>(name: string, fn: M): M {
  Object.defineProperty(fn, NAME, { value: name });
  return fn;
}

/** A middleware's name in a chain: the one `named` gave it, else none. */
export function middlewareName(fn: Fn): string | undefined {
  const given = (fn as unknown as Record<symbol, unknown>)[NAME];
  return typeof given === "string" ? given : undefined;
}

/** An entry, by itself or by its name. */
export type Which<M extends Fn> = M | string;

/** A middleware that called next() a second time: the rest of the chain (and the job or push) would run twice. */
function calledTwice(kind: string | undefined, mw: Fn, index: number): Error {
  const name = middlewareName(mw) ?? (mw.name || "an anonymous function");
  return new Error(
    `${kind ? `${kind} ` : ""}middleware ${name} (#${index + 1} in the chain) called next() a second time: next() runs the rest of the chain, once`,
  );
}

export class MiddlewareChain<M extends Fn> {
  /** The entries in order, first run first (Sidekiq's `entries`). */
  readonly entries: M[] = [];

  /** `kind` ("client", "server") only names the chain in errors. */
  constructor(private readonly kind?: string) {}

  private indexOf(which: Which<M>): number {
    return this.entries.findIndex((e) => e === which || (typeof which === "string" && middlewareName(e) === which));
  }

  /** Whether the chain holds it (Sidekiq's `exists?`). */
  exists(which: Which<M>): boolean {
    return this.indexOf(which) >= 0;
  }

  /** Whether the chain holds no middleware (Sidekiq's `empty?`): running it then costs nothing. */
  get empty(): boolean {
    return this.entries.length === 0;
  }

  /** Removes it, wherever it is (Sidekiq's `remove`). */
  remove(which: Which<M>): this {
    for (let i = this.indexOf(which); i >= 0; i = this.indexOf(which)) this.entries.splice(i, 1);
    return this;
  }

  /** Removes every entry (Sidekiq's `clear`). */
  clear(): this {
    this.entries.length = 0;
    return this;
  }

  /** Appends it; one of the same name already there is moved to the end, as Sidekiq's `add` does. */
  add(mw: M): this {
    this.removeSame(mw);
    this.entries.push(mw);
    return this;
  }

  /** Puts it first (Sidekiq's `prepend`). */
  prepend(mw: M): this {
    this.removeSame(mw);
    this.entries.unshift(mw);
    return this;
  }

  /** Puts it just before `other`, or first when `other` is not there (Sidekiq's `insert_before`). */
  insertBefore(other: Which<M>, mw: M): this {
    this.removeSame(mw);
    this.entries.splice(Math.max(0, this.indexOf(other)), 0, mw);
    return this;
  }

  /** Puts it just after `other`, or last when `other` is not there (Sidekiq's `insert_after`). */
  insertAfter(other: Which<M>, mw: M): this {
    this.removeSame(mw);
    const i = this.indexOf(other);
    this.entries.splice(i < 0 ? this.entries.length : i + 1, 0, mw);
    return this;
  }

  /**
   * Runs the chain around `last` (Sidekiq's `invoke`): each entry gets `ctx`
   * and a next() that runs the rest. Resolves to true when the end was
   * reached (`last` ran): false when an entry did not call next(), which
   * stops a push or skips a job. A second next() from one entry throws,
   * naming it. Callers skip the call altogether when the chain is `empty`.
   */
  async invoke(ctx: Parameters<M>[0], last?: () => unknown): Promise<boolean> {
    const entries = this.entries;
    let reached = false;
    // One closure per entry run (its next()), as few as a chain of calls allows.
    const step = async (i: number): Promise<void> => {
      if (i >= entries.length) {
        reached = true;
        if (last) await last();
        return;
      }
      const mw = entries[i]!;
      let called = false;
      await mw(ctx, () => {
        if (called) throw calledTwice(this.kind, mw, i);
        called = true;
        return step(i + 1);
      });
    };
    await step(0);
    return reached;
  }

  private removeSame(mw: M): void {
    const name = middlewareName(mw);
    this.remove(mw);
    if (name !== undefined) this.remove(name);
  }
}
