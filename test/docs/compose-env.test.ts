// docs/DOCKER.md's `docker compose up` on an archive-snapshot mirror: npm run
// prepare:env writes the apt options docker-compose.yml reads into `.env`,
// and keeps the user's own lines of that file as they are.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { updateComposeEnv } from "../../harness/prepare.js";

const OPTIONS = "-o Acquire::Check-Valid-Until=false";
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "sidekiq-bridge-env-"));
  file = join(dir, ".env");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the .env docker compose reads", () => {
  it("is written when the mirror needs apt options, and not at all when it does not", () => {
    updateComposeEnv("", file);
    expect(existsSync(file)).toBe(false);
    updateComposeEnv(OPTIONS, file);
    const text = readFileSync(file, "utf8");
    expect(text).toMatch(/^# Written by npm run prepare:env: .*\n/);
    expect(text).toContain(`SIDEKIQ_BRIDGE_APT_OPTIONS="${OPTIONS}"\n`);
    expect(text).not.toMatch(/https?:|deb\b/);
    updateComposeEnv(OPTIONS, file);
    expect(readFileSync(file, "utf8")).toBe(text);
    updateComposeEnv("", file);
    expect(existsSync(file)).toBe(false);
  });

  it("keeps the user's lines, and a value the user set by hand", () => {
    writeFileSync(file, "COMPOSE_PROJECT_NAME=fleet\n");
    updateComposeEnv(OPTIONS, file);
    expect(readFileSync(file, "utf8")).toMatch(
      /^COMPOSE_PROJECT_NAME=fleet\n# Written by .*\nSIDEKIQ_BRIDGE_APT_OPTIONS=/,
    );
    updateComposeEnv("", file);
    expect(readFileSync(file, "utf8")).toBe("COMPOSE_PROJECT_NAME=fleet\n");
    writeFileSync(file, 'SIDEKIQ_BRIDGE_APT_OPTIONS="-o Acquire::http::Proxy=false"\n');
    expect(updateComposeEnv(OPTIONS, file)).toContain("set by hand");
    updateComposeEnv("", file);
    expect(readFileSync(file, "utf8")).toBe('SIDEKIQ_BRIDGE_APT_OPTIONS="-o Acquire::http::Proxy=false"\n');
  });
});
