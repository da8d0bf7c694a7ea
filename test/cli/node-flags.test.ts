import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { WORKER_NODE_FLAGS } from "../../src/cli/node-flags.js";

it("the CLI's shebang starts node with WORKER_NODE_FLAGS (the flags the bench's worker uses)", () => {
  const first = readFileSync(new URL("../../src/cli/main.ts", import.meta.url), "utf8").split("\n")[0];
  expect(first).toBe(`#!/usr/bin/env -S node ${WORKER_NODE_FLAGS.join(" ")}`);
});
