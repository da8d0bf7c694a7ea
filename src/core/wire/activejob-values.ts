// What ActiveJob's serialized Ruby values become in JavaScript, shared by the
// decoder (server/activejob-args.ts) and the encoder (client/activejob.ts), so
// a value a handler received can be enqueued again as Rails wrote it.
import type { RubyJsonValue } from "./ruby-json.js";

/** A record reference (`GlobalID`), e.g. gid://app/User/1. */
export class GlobalIdRef {
  constructor(readonly gid: string) {}
}

/**
 * A serialized Ruby object this decoder does not turn into a JS value (a custom
 * ActiveJob serializer): `raw` is the object as Rails wrote it, floats kept as
 * RubyFloat, and passing it back as an argument writes it byte for byte.
 */
export class AjSerialized {
  constructor(
    readonly serializer: string,
    readonly value: RubyJsonValue | undefined,
    readonly raw: { [k: string]: RubyJsonValue },
  ) {}
}

/** An ActiveSupport::Duration: `seconds` is its value, `parts` its units (`{ hours: 1, minutes: 30 }`). */
export class AjDuration {
  constructor(
    readonly seconds: number,
    readonly parts: Readonly<Record<string, number>>,
  ) {}
}

/** A Ruby Range: `begin..end`, or `begin...end` when `excludeEnd`; a null end is endless, a null begin beginless. */
export class AjRange<T = unknown> {
  constructor(
    readonly begin: T | null,
    readonly end: T | null,
    readonly excludeEnd = false,
  ) {}
}

/** A Ruby class or module, by name (ActiveJob's ModuleSerializer). */
export class AjModule {
  constructor(readonly name: string) {}
}

// What Rails wrote for a value the decoder made, kept beside the value rather
// than in it: the classes stay plain data (equal to one built by hand), and a
// Range of Dates or BigDecimals, or a Duration of Float parts, still goes back
// byte for byte (JavaScript has no place for the Date/Time, BigDecimal or 1.0).
const wrote = new WeakMap<object, { [k: string]: RubyJsonValue }>();

/** Records `raw`, the serialized object Rails wrote, as what `value` is written back as. */
export function decodedFromRails<T extends object>(value: T, raw: { [k: string]: RubyJsonValue }): T {
  wrote.set(value, raw);
  return value;
}

/** The serialized object Rails wrote for a decoded value, or undefined for a value made in Node. */
export function railsWrote(value: object): { [k: string]: RubyJsonValue } | undefined {
  return wrote.get(value);
}
