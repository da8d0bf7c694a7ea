// A Sidekiq job payload held as its original JSON members. Reading parses one
// member on demand; writing replaces one member's text. Everything not touched
// is copied through unchanged, so a rewrite (retry fields, requeue, timestamp
// migration) keeps unknown keys, key order, big integers and `1.0` lexemes.
import { parseJson, splitObject, WireParseError, type JsonValue, type RawMember } from "./json-scan.js";
import { toRubyJson, type RubyJsonValue } from "./ruby-json.js";

/** A job payload read losslessly: get and set fields; `toString()` writes every untouched byte as it was (unknown keys, key order, big integers, `1.0`). */
export class JobRecord {
  private members: RawMember[];
  private dirty = false;

  private constructor(
    private readonly original: string,
    members: RawMember[],
  ) {
    this.members = members;
  }

  /** Parses a payload; throws WireParseError for text that is not one JSON object. */
  static parse(raw: string): JobRecord {
    return new JobRecord(raw, splitObject(raw));
  }

  /** Builds a new payload from values, in the given key order. */
  static fromEntries(entries: Iterable<[string, RubyJsonValue]>): JobRecord {
    const members: RawMember[] = [];
    for (const [key, value] of entries) members.push({ key, raw: toRubyJson(value) });
    const rec = new JobRecord("", members);
    rec.dirty = true;
    return rec;
  }

  private index(key: string): number {
    // Ruby's JSON.parse keeps the last of duplicate keys.
    for (let i = this.members.length - 1; i >= 0; i--) if (this.members[i]!.key === key) return i;
    return -1;
  }

  has(key: string): boolean {
    return this.index(key) >= 0;
  }

  keys(): string[] {
    return this.members.map((m) => m.key);
  }

  /** The member's JSON text exactly as stored, or undefined. */
  raw(key: string): string | undefined {
    const i = this.index(key);
    return i < 0 ? undefined : this.members[i]!.raw;
  }

  /** The member parsed (integers beyond 2^53 as bigint), or undefined. */
  get(key: string): JsonValue | undefined {
    const i = this.index(key);
    if (i < 0) return undefined;
    const m = this.members[i]!;
    if (!m.plain) return parseJson(m.raw);
    // Validated when the payload was split, with no big integer: no second scan.
    const r = m.raw;
    // A string without escapes is its text between the quotes (most of a job's fields).
    if (r.charCodeAt(0) === 0x22 && !r.includes("\\")) return r.slice(1, -1);
    return JSON.parse(r) as JsonValue;
  }

  getString(key: string): string | undefined {
    const v = this.get(key);
    return typeof v === "string" ? v : undefined;
  }

  /** Replaces the value in place, or appends the key at the end (as Ruby's Hash#[]= does). */
  set(key: string, value: RubyJsonValue): this {
    const raw = toRubyJson(value);
    const i = this.index(key);
    if (i >= 0) {
      if (this.members[i]!.raw === raw) return this;
      this.members[i] = { key, raw };
    } else this.members.push({ key, raw });
    this.dirty = true;
    return this;
  }

  delete(key: string): this {
    const before = this.members.length;
    this.members = this.members.filter((m) => m.key !== key);
    if (this.members.length !== before) this.dirty = true;
    return this;
  }

  /** A deep copy to change independently. */
  clone(): JobRecord {
    const c = new JobRecord(
      this.original,
      this.members.map((m) => ({ ...m })),
    );
    c.dirty = this.dirty;
    return c;
  }

  /** The payload as Sidekiq would write it; the original text when nothing changed. */
  toString(): string {
    if (!this.dirty) return this.original;
    let out = "{";
    for (let i = 0; i < this.members.length; i++) {
      const m = this.members[i]!;
      out += `${i > 0 ? "," : ""}${toRubyJson(m.key)}:${m.raw}`;
    }
    return `${out}}`;
  }

  toJSON(): string {
    return this.toString();
  }

  /** Plain values, for validation and for handing to user code. */
  toObject(): { [key: string]: JsonValue } {
    const o: { [key: string]: JsonValue } = {};
    for (const m of this.members) o[m.key] = parseJson(m.raw);
    return o;
  }
}

export { WireParseError };
