// A mismatch, and how it is printed: the minimal case as a vitest regression
// test to paste into interop-tests/ (it reruns the same check on that case).
import { RubyFloat } from "../../src/core/wire/ruby-json.js";
import type { FuzzCase } from "./generator.js";

export type Direction = "ruby-to-node" | "node-to-ruby";

export interface Mismatch {
  case: FuzzCase;
  direction: Direction;
  problems: string[];
}

/** A value for a message, cut short. */
export const show = (v: unknown): string => (JSON.stringify(v) ?? "undefined").slice(0, 300);

/** The case's fields as TypeScript source (bigint, RubyFloat and all). */
export function fieldsSource(fields: FuzzCase["fields"]): string {
  const lit = (v: unknown): string => {
    if (v === null) return "null";
    if (typeof v === "bigint") return `${v}n`;
    if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
    if (typeof v === "string" || typeof v === "boolean") return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map(lit).join(", ")}]`;
    if (v instanceof RubyFloat) return `new RubyFloat(${lit(v.value)})`;
    return `{ ${Object.entries(v as object)
      .map(([k, x]) => `${JSON.stringify(k)}: ${lit(x)}`)
      .join(", ")} }`;
  };
  return `[\n${fields.map(([k, v]) => `      [${JSON.stringify(k)}, ${lit(v)}],`).join("\n")}\n    ]`;
}

/** A ready-made regression test for a (shrunk) mismatch on one release. */
export function regressionTest(m: Mismatch, version: string): string {
  const fn = m.direction === "ruby-to-node" ? "rubyToNode" : "nodeToRuby";
  return `// interop-tests/fuzz-regression-<name>.test.ts
import { expect, it } from "vitest";
import { ${fn} } from "../chaos/fuzz/${m.direction}.js";
import { RubyFloat } from "../src/core/wire/ruby-json.js";
import { describeEachSidekiq } from "./support/harness.js";
import { rigFor } from "../chaos/fuzz/interop-rig.js";

describeEachSidekiq(
  "fuzz regression: <what went wrong>",
  (sk) => {
    const rig = rigFor(sk);
    it("${m.direction}: ${m.problems[0]!.split("\n")[0]!
      .replace(/["\\\\]/g, "'")
      .slice(0, 120)}", async () => {
      const fields = ${fieldsSource(m.case.fields)};
      expect(await ${fn}(await rig(), [{ seed: ${m.case.seed}, index: ${m.case.index}, fields }])).toEqual([]);
    });
  },
  (t) => t.version === "${version}",
);
`;
}
