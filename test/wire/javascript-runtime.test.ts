import { describe, expect, it } from "vitest";
import { javascriptRuntime, javascriptRuntimeLabel } from "../../src/core/wire/bridge-label.js";

// Each case passes its globals: the suite itself runs on Node, Bun and Deno
// (npm test's runtime passes), where the real Bun or Deno global is there.
describe("javascriptRuntime", () => {
  it("is Node with process.versions.node when neither Bun nor Deno is there", () => {
    expect(javascriptRuntime({})).toEqual({ name: "Node", version: process.versions.node });
    expect(javascriptRuntimeLabel(javascriptRuntime({}))).toBe(`Node ${process.versions.node}`);
  });

  it("is Bun on Bun, which reports an emulated Node release in process.versions.node", () => {
    expect(javascriptRuntime({ Bun: { version: "1.4.4" } })).toEqual({ name: "Bun", version: "1.4.4" });
    expect(javascriptRuntimeLabel({ name: "Bun", version: "1.4.4" })).toBe("Bun 1.4.4");
  });

  it("is Deno on Deno, from Deno.version.deno", () => {
    const scope = { Deno: { version: { deno: "2.9.6", v8: "14.0", typescript: "5.9" } } };
    expect(javascriptRuntime(scope)).toEqual({ name: "Deno", version: "2.9.6" });
    expect(javascriptRuntimeLabel(javascriptRuntime(scope))).toBe("Deno 2.9.6");
  });

  it("takes a global named Bun or Deno without a version string for what it is not: Node", () => {
    expect(javascriptRuntime({ Bun: {}, Deno: { version: {} } })).toEqual({
      name: "Node",
      version: process.versions.node,
    });
  });

  it("names the runtime these tests run on, as that runtime's process.versions does", () => {
    const versions = process.versions as NodeJS.ProcessVersions & { bun?: string; deno?: string };
    const expected = versions.bun
      ? { name: "Bun", version: versions.bun }
      : versions.deno
        ? { name: "Deno", version: versions.deno }
        : { name: "Node", version: versions.node };
    expect(javascriptRuntime()).toEqual(expected);
  });
});
