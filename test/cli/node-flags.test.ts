import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { WORKER_NODE_FLAGS } from "../../src/tools/cli/node-flags.js";

it("the CLI's shebang starts node with WORKER_NODE_FLAGS (the flags the bench's worker uses)", () => {
  const first = readFileSync(new URL("../../src/assembly/main.ts", import.meta.url), "utf8").split("\n")[0];
  expect(first).toBe(`#!/usr/bin/env -S node ${WORKER_NODE_FLAGS.join(" ")}`);
});

it("docker-compose.yml's node worker starts node with WORKER_NODE_FLAGS too (it runs dist/assembly/main.js, not the shebang)", () => {
  const compose = readFileSync(new URL("../../docker-compose.yml", import.meta.url), "utf8");
  const commands = [...compose.matchAll(/command: \[("node", [^\]]*"dist\/assembly\/main\.js"[^\]]*)\]/g)].map(
    (m) => m[1]!,
  );
  expect(commands.length).toBeGreaterThan(0);
  for (const c of commands)
    expect(
      c.startsWith(["node", ...WORKER_NODE_FLAGS, "dist/assembly/main.js"].map((a) => JSON.stringify(a)).join(", ")),
    ).toBe(true);
});
