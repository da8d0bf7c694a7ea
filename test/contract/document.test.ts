import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ContractFileError,
  parseContract,
  readContractFile,
  stringifyContract,
  type JobContract,
} from "../../src/tools/contract/document.js";
import { mergeContracts } from "../../src/core/contract/merge.js";

const FIXTURE = join(import.meta.dirname, "fixtures/shop.contract.json");

describe("contract document", () => {
  it("the committed fixture is valid and stringifies to its own bytes (a pull rewrites nothing that did not change)", () => {
    const doc = readContractFile(FIXTURE);
    expect(stringifyContract(doc)).toBe(readFileSync(FIXTURE, "utf8"));
  });

  it("stringifies in one order whatever order it was built in: classes by name, fields in a fixed order", () => {
    const a: JobContract = {
      classes: {
        ZJob: { params: [{ kind: "req", name: "a" }], kind: "sidekiq", options: { retry: 1, queue: "q" } },
        AJob: { kind: "sidekiq", unchecked: "why" },
      },
      globalid_app: "x-records",
      contract: 1,
      app: "x",
    };
    const text = stringifyContract(a);
    // The document's own fields first, the GlobalID app just before the classes.
    expect(text).toMatch(/^\{\n {2}"contract": 1,\n {2}"app": "x",\n {2}"globalid_app": "x-records",\n {2}"classes"/);
    expect(text.indexOf('"AJob"')).toBeLessThan(text.indexOf('"ZJob"'));
    expect(text).toContain('"name": "a",\n          "kind": "req"');
    expect(text).toContain('"queue": "q",\n        "retry": 1');
    expect(text.endsWith("}\n")).toBe(true);
  });

  it("names what is wrong with a bad document, and refuses another format version", () => {
    expect(() => parseContract({ contract: 1, app: "x", classes: { A: { kind: "perl" } } })).toThrow(
      /\/classes\/A\/kind must be equal to one of the allowed values/,
    );
    expect(() => parseContract({ contract: 2, app: "x", classes: {} }, "c.json")).toThrow(
      /c.json is contract format 2; this sidekiq-bridge reads format 1/,
    );
    expect(() => readContractFile("/nonexistent/c.json")).toThrow(ContractFileError);
  });

  it("merges apps by name, one namespace each", () => {
    const shop = readContractFile(FIXTURE);
    const billing: JobContract = {
      contract: 1,
      app: "billing",
      classes: { WelcomeEmailJob: { kind: "sidekiq", params: [] } },
    };
    const merged = mergeContracts([shop, billing]);
    expect(merged.get("WelcomeEmailJob")!.map((c) => c.app)).toEqual(["shop", "billing"]);
    expect(() => mergeContracts([shop, shop])).toThrow(/two contracts are named "shop"/);
  });
});
