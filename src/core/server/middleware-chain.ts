// A middleware chain as Sidekiq's (Sidekiq::Middleware::Chain): ordered
// entries that can be added, removed, asked for (`exists?`) and placed
// before or after another. Sidekiq names an entry by its class; a function
// here may carry a name of its own (`named`), so a user who adds an add-on's
// middleware by hand is found by the name alone. A function's own name is
// not used: two modules' `const middleware = ...` would be taken for one.

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

export class MiddlewareChain<M extends Fn> {
  /** The entries in order; the same array for the chain's life (the processor holds it). */
  readonly entries: M[] = [];

  private indexOf(which: Which<M>): number {
    return this.entries.findIndex((e) => e === which || (typeof which === "string" && middlewareName(e) === which));
  }

  /** Whether the chain holds it (Sidekiq's `exists?`). */
  exists(which: Which<M>): boolean {
    return this.indexOf(which) >= 0;
  }

  /** Removes it, wherever it is (Sidekiq's `remove`). */
  remove(which: Which<M>): this {
    for (let i = this.indexOf(which); i >= 0; i = this.indexOf(which)) this.entries.splice(i, 1);
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

  private removeSame(mw: M): void {
    const name = middlewareName(mw);
    this.remove(mw);
    if (name !== undefined) this.remove(name);
  }
}
