// The pass manifest (interop-tests/passes.ts): every file it names exists and
// is named once, each rule says why, the first pass leaves nothing out, and
// the Docker pass leaves out at least what the Valkey/Node 24 pass does; npm
// test runs every pass (scripts/test-repeat-passes.ts runs REPEAT_SLOTS).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  excludedFrom,
  interopIncluded,
  passNamed,
  PASS_RULES,
  PASS_SERVERS,
  REPEAT_SLOTS,
  RUNTIME_PASS_FILES,
} from "../../interop-tests/passes.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("which passes run which interop files", () => {
  it("names files that exist, each once, each rule with its reason and the first pass", () => {
    const files = PASS_RULES.flatMap((r) => [...r.files]);
    expect(files.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
    expect(files.filter((f, i) => files.indexOf(f) !== i)).toEqual([]);
    for (const r of PASS_RULES) {
      expect(r.reason.length, r.files.join(", ")).toBeGreaterThan(20);
      expect(r.passes, r.files.join(", ")).toContain("first");
    }
  });

  it("the first pass runs everything; Docker leaves out what the repeat pass does, and more", () => {
    expect(excludedFrom(undefined)).toEqual([]);
    const repeat = excludedFrom("repeat");
    const docker = excludedFrom("docker");
    expect(repeat).toContain("interop-tests/release-sweep.test.ts");
    expect(repeat).not.toContain("interop-tests/acl-user.test.ts");
    expect(docker).toEqual(expect.arrayContaining([...repeat, "interop-tests/acl-user.test.ts"]));
  });

  it("the Bun and Deno passes run the runtime subset, which exists, and nothing else of the interop project", () => {
    expect(RUNTIME_PASS_FILES.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
    expect(interopIncluded("bun")).toEqual([...RUNTIME_PASS_FILES]);
    expect(interopIncluded("deno")).toEqual([...RUNTIME_PASS_FILES]);
    expect(interopIncluded(undefined)).toEqual(["interop-tests/**/*.test.ts"]);
    expect(excludedFrom("bun")).toEqual([]);
  });

  it("npm test runs every pass after the first once, the Bun and Deno passes in one slot", () => {
    expect(REPEAT_SLOTS.flat().toSorted()).toEqual(["bun", "deno", "docker", "repeat"]);
    expect(REPEAT_SLOTS).toHaveLength(3);
    expect(REPEAT_SLOTS).toContainEqual(["bun", "deno"]);
    expect(PASS_SERVERS.deno).toBe("redis8");
  });

  it("refuses a pass it does not know", () => {
    expect(() => passNamed("valkey")).toThrow('SIDEKIQ_BRIDGE_PASS must be repeat, docker, bun or deno, not "valkey"');
  });
});
