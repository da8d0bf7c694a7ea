// Drift: what changed between two contracts of one app (the committed one
// and the app's current one), and where a Ruby class and the Node handler of
// the same name disagree on what perform accepts.
import type { JobClass, JobContract, Parameter } from "./document.js";

/** A positional signature: counts and, per position, the declared schema. */
function positional(params: readonly Parameter[]) {
  const pos = params.filter((p) => p.kind === "req" || p.kind === "opt");
  const required = params.filter((p) => p.kind === "req").length;
  const rest = params.some((p) => p.kind === "rest");
  return { pos, required, max: rest ? Infinity : pos.length, keyreq: params.filter((p) => p.kind === "keyreq") };
}

function arity(params: readonly Parameter[]): string {
  const { required, max } = positional(params);
  const n = (k: number) => `${k} argument${k === 1 ? "" : "s"}`;
  const names = params
    .filter((p) => p.kind !== "block")
    .map((p) => (p.kind === "opt" ? `${p.name}?` : p.kind === "rest" ? `*${p.name}` : p.name));
  const count =
    max === Infinity ? `at least ${n(required)}` : required === max ? n(required) : `${required} to ${n(max)}`;
  return `${count} (${names.join(", ")})`;
}

/** JSON with object keys sorted: a pulled contract and a committed (sorted) one compare equal. */
function json(v: unknown): string {
  return JSON.stringify(v ?? null, (_k, x: unknown) =>
    x && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

/**
 * How a Ruby class's perform and the Node handler of that name differ (what
 * one accepts and the other refuses), or undefined when they agree. Types are
 * compared only where both sides declare one.
 */
export function signatureDifference(ruby: JobClass, node: JobClass): string | undefined {
  const r = positional(ruby.params ?? []);
  const n = positional(node.params ?? []);
  if (ruby.kind === "sidekiq" && r.keyreq.length > 0)
    return `Ruby's perform requires keywords (${r.keyreq.map((p) => `${p.name}:`).join(", ")}), which Sidekiq never passes`;
  if (r.required !== n.required || r.max !== n.max)
    return `Ruby's perform takes ${arity(ruby.params ?? [])}; the Node handler takes ${arity(node.params ?? [])}`;
  for (let i = 0; i < r.pos.length; i++) {
    const a = r.pos[i]!;
    const b = n.pos[i]!;
    if (a.schema !== undefined && b.schema !== undefined && json(a.schema) !== json(b.schema))
      return `argument ${i + 1} is ${a.type ?? json(a.schema)} in Ruby (${a.name}) and ${json(b.schema)} in the Node handler (${b.name})`;
  }
  return undefined;
}

/** What changed from `before` to `after`, one line per class (empty: nothing that matters to a push). */
export function contractChanges(before: JobContract, after: JobContract): string[] {
  const out: string[] = [];
  // The app's locale and zone go into every ActiveJob payload Node writes for it.
  if (json(before.activejob_defaults) !== json(after.activejob_defaults))
    out.push(
      `(app): ActiveJob's locale and time zone were ${json(before.activejob_defaults)}, now ${json(after.activejob_defaults)}`,
    );
  // The app's records: every GlobalID Node names for it (client.record) carries it.
  if (before.globalid_app !== after.globalid_app)
    out.push(`(app): GlobalID.app was ${json(before.globalid_app)}, now ${json(after.globalid_app)}`);
  const names = [...new Set([...Object.keys(before.classes), ...Object.keys(after.classes)])].sort();
  for (const name of names) {
    const a = before.classes[name];
    const b = after.classes[name];
    if (!a) out.push(`${name}: new (${b!.kind})`);
    else if (!b) out.push(`${name}: gone`);
    else {
      if (a.kind !== b.kind) out.push(`${name}: was ${a.kind}, now ${b.kind}`);
      if (json(a.params) !== json(b.params))
        out.push(
          `${name}: perform took ${arity(a.params ?? [])}, now ${arity(b.params ?? [])}${json(a.params?.map((p) => [p.name, p.kind])) === json(b.params?.map((p) => [p.name, p.kind])) ? " (types changed)" : ""}`,
        );
      if (json(a.options) !== json(b.options))
        out.push(`${name}: options were ${json(a.options)}, now ${json(b.options)}`);
      if (json(a.activejob) !== json(b.activejob))
        out.push(`${name}: ActiveJob settings were ${json(a.activejob)}, now ${json(b.activejob)}`);
      if (a.unchecked !== b.unchecked)
        out.push(`${name}: ${b.unchecked === undefined ? "now checked" : `now unchecked (${b.unchecked})`}`);
    }
  }
  return out;
}

/** Where the Node handlers and the Ruby classes of the same names disagree; handlers without a schema are listed apart. */
export function handlerDrift(
  ruby: readonly JobContract[],
  node: JobContract,
): { differ: string[]; unchecked: string[] } {
  const differ: string[] = [];
  const unchecked: string[] = [];
  for (const [name, handler] of Object.entries(node.classes)) {
    const defs = ruby
      .map((c) => c.classes[name])
      .filter((d): d is JobClass => d !== undefined && d.unchecked === undefined);
    if (defs.length === 0) continue;
    if (handler.params === undefined) {
      unchecked.push(`${name}: ${handler.unchecked ?? "no argument schema"}`);
      continue;
    }
    const diffs = defs.map((d) => signatureDifference(d, handler));
    if (diffs.every((d) => d !== undefined)) differ.push(`${name}: ${diffs[0]}`);
  }
  return { differ, unchecked };
}
