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
