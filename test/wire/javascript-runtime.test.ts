import { afterEach, describe, expect, it, vi } from "vitest";
import { javascriptRuntime, javascriptRuntimeLabel } from "../../src/core/wire/bridge-label.js";

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("javascriptRuntime", () => {
  it("is Node with process.versions.node when neither Bun nor Deno is there", () => {
    expect(javascriptRuntime()).toEqual({ name: "Node", version: process.versions.node });
    expect(javascriptRuntimeLabel()).toBe(`Node ${process.versions.node}`);
  });

  it("is Bun on Bun, which reports an emulated Node release in process.versions.node", () => {
    vi.stubGlobal("Bun", { version: "1.4.4" });
    expect(javascriptRuntime()).toEqual({ name: "Bun", version: "1.4.4" });
    expect(javascriptRuntimeLabel()).toBe("Bun 1.4.4");
  });

  it("is Deno on Deno, from Deno.version.deno", () => {
    vi.stubGlobal("Deno", { version: { deno: "2.9.6", v8: "14.0", typescript: "5.9" } });
    expect(javascriptRuntime()).toEqual({ name: "Deno", version: "2.9.6" });
    expect(javascriptRuntimeLabel()).toBe("Deno 2.9.6");
  });

  it("takes a global named Bun or Deno without a version string for what it is not: Node", () => {
    expect(javascriptRuntime({ Bun: {}, Deno: { version: {} } })).toEqual({
      name: "Node",
      version: process.versions.node,
    });
  });
});
