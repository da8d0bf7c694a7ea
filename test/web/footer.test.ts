// The dashboard's footer names the JavaScript runtime it is served from:
// Node's release on Node (the text it always had), Bun's or Deno's own
// release on those, which report an emulated Node release as process.version.
import { afterEach, describe, expect, it, vi } from "vitest";
import { useWebTestServer } from "./web-test-server.js";

const web = useWebTestServer();

afterEach(() => {
  vi.unstubAllGlobals();
});

async function footer(): Promise<string> {
  const page = await (await fetch(`${await web.serve()}/`)).text();
  return /<footer>\s*<span>([^<]*)<\/span>/.exec(page)?.[1] ?? page;
}

describe("the dashboard's footer", () => {
  it("says Node and its release on Node", async () => {
    expect(await footer()).toBe(`sidekiq-bridge · Node ${process.versions.node}`);
  });

  it("says Bun and Bun's release on Bun", async () => {
    vi.stubGlobal("Bun", { version: "1.4.4" });
    expect(await footer()).toBe("sidekiq-bridge · Bun 1.4.4");
  });

  it("says Deno and Deno's release on Deno", async () => {
    vi.stubGlobal("Deno", { version: { deno: "2.9.6" } });
    expect(await footer()).toBe("sidekiq-bridge · Deno 2.9.6");
  });
});
