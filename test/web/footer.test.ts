// The dashboard's footer names the JavaScript runtime it is served from:
// Node's release on Node (the text it always had), Bun's or Deno's own
// release on those, which report an emulated Node release as process.version.
// Bun's global cannot be stubbed away on Bun, so each runtime is checked on
// itself: npm test runs this file on Node, Bun and Deno (its runtime passes);
// test/wire/javascript-runtime.test.ts covers the detection on any of them.
import { describe, expect, it } from "vitest";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();

async function footer(): Promise<string> {
  const page = await (await fetch(`${await web.serve()}/`)).text();
  return /<footer>\s*<span>([^<]*)<\/span>/.exec(page)?.[1] ?? page;
}

describe("the dashboard's footer", () => {
  it("says the runtime it is served from and that runtime's own release, as process.versions names them", async () => {
    const versions = process.versions as NodeJS.ProcessVersions & { bun?: string; deno?: string };
    const label = versions.bun
      ? `Bun ${versions.bun}`
      : versions.deno
        ? `Deno ${versions.deno}`
        : `Node ${versions.node}`;
    expect(await footer()).toBe(`sidekiq-bridge · ${label}`);
  });
});
