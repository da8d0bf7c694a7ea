// Schema validation of pushes: off unless asked for, and never turned on by a
// test runner's own variables (VITEST, NODE_ENV=test), which would change
// what a push does in users' test runs.
import { afterEach, describe, expect, it } from "vitest";
import { Client } from "../../src/core/client/client.js";

const validating = (c: Client) => (c as unknown as { validate: boolean }).validate;

describe("the client's validation default", () => {
  const saved = process.env.SIDEKIQ_BRIDGE_VALIDATE;
  const clients: Client[] = [];
  afterEach(async () => {
    if (saved === undefined) delete process.env.SIDEKIQ_BRIDGE_VALIDATE;
    else process.env.SIDEKIQ_BRIDGE_VALIDATE = saved;
    for (const c of clients.splice(0)) await c.close();
  });
  const client = (validate?: boolean) => {
    const c = new Client({ redis: "redis://127.0.0.1:1", dialect: 8, validate, warn: () => undefined });
    clients.push(c);
    return c;
  };

  it("is off without SIDEKIQ_BRIDGE_VALIDATE, whatever VITEST and NODE_ENV say", () => {
    delete process.env.SIDEKIQ_BRIDGE_VALIDATE;
    expect(process.env.VITEST).toBeDefined();
    expect(validating(client())).toBe(false);
  });

  it("is on with SIDEKIQ_BRIDGE_VALIDATE=1, and the option wins either way", () => {
    process.env.SIDEKIQ_BRIDGE_VALIDATE = "1";
    expect(validating(client())).toBe(true);
    expect(validating(client(false))).toBe(false);
    delete process.env.SIDEKIQ_BRIDGE_VALIDATE;
    expect(validating(client(true))).toBe(true);
  });
});
