// The release sweep's selection and how an upstream release is run: the
// wrong release must never stand in for the one named.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addonAllows, releaseCommand } from "../../harness/local-backend.js";
import {
  MATRIX,
  requirementAllows,
  SWEEP,
  selectedTargets,
  sweepTargets,
  targetForVersion,
} from "../../harness/versions.js";

describe("release sweep selection", () => {
  it("SIDEKIQ_RELEASE replaces the matrix; with SIDEKIQ_VERSIONS too, or an unknown name, it is an error", () => {
    expect(selectedTargets(undefined, "7.2.4,8.0.8").map((t) => t.version)).toEqual(["7.2.4", "8.0.8"]);
    expect(selectedTargets("7", undefined)).toEqual([MATRIX[1]]);
    expect(() => selectedTargets("7", "7.2.4")).toThrow(/not both/);
    expect(() => selectedTargets(undefined, "7.2.5")).toThrow(/neither the matrix nor the sweep/);
  });

  it("the sweep holds the matrix, and each upstream release runs from its own folder in its suite", () => {
    expect(SWEEP).toHaveLength(10);
    for (const m of MATRIX) expect(SWEEP).toContain(m);
    expect(targetForVersion("6.5.12")).toMatchObject({ suite: "bookworm", release: "sidekiq-6.5.12" });
    expect(targetForVersion("8.0.8").preload).toEqual(["connection_pool-2.5.5"]);
    expect(sweepTargets([MATRIX[0]!], undefined).map((t) => t.version)).toEqual(["6.4.1", "6.5.12"]);
    expect(sweepTargets([MATRIX[1]!], "7.3.2").map((t) => t.version)).toEqual(["7.3.2"]);
  });
});

describe("releaseCommand", () => {
  const root = mkdtempSync(join(tmpdir(), "sweep-root-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const t = targetForVersion("7.2.4");

  it("throws when the release's folder is not in the root filesystem", () => {
    expect(() => releaseCommand(root, "/opt/x", t, ["ruby", "a.rb"], {})).toThrow(/Sidekiq 7\.2\.4 is not in/);
  });

  it("puts the release's lib first on RUBYLIB, runs its bin/sidekiq, and checks the version first", () => {
    mkdirSync(join(root, "/opt/x/releases/sidekiq-7.2.4/lib/sidekiq"), { recursive: true });
    writeFileSync(join(root, "/opt/x/releases/sidekiq-7.2.4/lib/sidekiq/version.rb"), "");
    const r = releaseCommand(root, "/opt/x", t, ["sidekiq", "-c", "2"], { RUBYLIB: "/opt/x/peers/a/lib" });
    expect(r.cmd).toEqual([
      "ruby",
      "-r/opt/x/lib/release_check.rb",
      "/opt/x/releases/sidekiq-7.2.4/bin/sidekiq",
      "-c",
      "2",
    ]);
    expect(r.env).toMatchObject({
      RUBYLIB: "/opt/x/releases/sidekiq-7.2.4/lib:/opt/x/peers/a/lib",
      BRIDGE_SIDEKIQ_RELEASE: "7.2.4",
    });
    expect(releaseCommand(root, "/opt/x", MATRIX[1]!, ["sidekiq"], {})).toEqual({ cmd: ["sidekiq"], env: {} });
  });
});

describe("addonAllows (the gemspecs in shared/peers/ruby)", () => {
  it("reads the add-on's gemspec requirement on sidekiq", () => {
    expect(addonAllows("sidekiq-scheduler-6.0.2", "7.2.4")).toBe(false);
    expect(addonAllows("sidekiq-scheduler-6.0.2", "7.3.10")).toBe(true);
    expect(addonAllows("sidekiq-scheduler-6.0.2", "9.0.0")).toBe(false);
    expect(addonAllows("sidekiq-throttled-1.5.2", "6.5.12")).toBe(true);
    expect(addonAllows("sidekiq-throttled-2.1.0", "8.0.8")).toBe(true);
    expect(addonAllows("sidekiq-unique-jobs-8.1.0", "6.5.12")).toBe(false);
    expect(addonAllows("fugit-1.13.0", "6.5.12")).toBe(true);
  });

  it("compares each requirement, and refuses one it cannot read", () => {
    expect(requirementAllows([">= 6", "< 8"], "7.3.10")).toBe(true);
    expect(requirementAllows([">= 6", "< 8"], "8.0.0")).toBe(false);
    expect(requirementAllows(["= 7.0.0"], "7.0")).toBe(true);
    expect(() => requirementAllows(["~> 7.0"], "7.1.6")).toThrow('cannot read the requirement "~> 7.0"');
  });
});
