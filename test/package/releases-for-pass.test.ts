import { describe, expect, it } from "vitest";
import { MATRIX } from "../../harness/versions.js";
import { releasesForPass } from "../../interop-tests/support/harness.js";

describe("releasesForPass: which Sidekiq releases a pass runs an interop block on", () => {
  it("the first pass runs every release", () => {
    expect(releasesForPass("any block", MATRIX, {})).toEqual(MATRIX);
  });

  it("a repeat pass runs one, and the two repeat passes pick different ones", () => {
    for (const title of ["client: Node enqueues for Ruby workers", "server heartbeat", "api", "x"]) {
      const valkey = releasesForPass(title, MATRIX, { SIDEKIQ_BRIDGE_PASS: "repeat" });
      const docker = releasesForPass(title, MATRIX, { SIDEKIQ_BRIDGE_PASS: "docker" });
      expect(valkey).toHaveLength(1);
      expect(docker).toHaveLength(1);
      expect(valkey[0]).not.toBe(docker[0]);
    }
  });

  it("every release is picked by some block in each repeat pass", () => {
    const titles = Array.from({ length: 12 }, (_, i) => `block ${i}`);
    for (const pass of ["repeat", "docker"]) {
      const picked = new Set(titles.map((t) => releasesForPass(t, MATRIX, { SIDEKIQ_BRIDGE_PASS: pass })[0]!.version));
      expect([...picked].sort()).toEqual(MATRIX.map((t) => t.version).sort());
    }
  });

  it("SIDEKIQ_BRIDGE_FULL_MATRIX=1 and a block with one release keep all they have", () => {
    expect(releasesForPass("x", MATRIX, { SIDEKIQ_BRIDGE_PASS: "docker", SIDEKIQ_BRIDGE_FULL_MATRIX: "1" })).toEqual(
      MATRIX,
    );
    expect(releasesForPass("x", [MATRIX[0]!], { SIDEKIQ_BRIDGE_PASS: "repeat" })).toEqual([MATRIX[0]]);
  });
});
