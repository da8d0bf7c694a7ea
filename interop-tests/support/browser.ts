// Headless Chromium from Debian (installed by the harness when missing),
// driven by playwright-core: Playwright's own browser download is not used.
// Every page opened records console errors and uncaught exceptions.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { ensureChromium } from "../../harness/prepare.js";

/**
 * Where the tests put their screenshots: an ignored folder, so a test run
 * leaves the tree as it found it. `npm run docs:screenshots` points it at
 * docs/screenshots, to refresh the images README and docs/WEB.md show.
 */
export const SCREENSHOTS = process.env.SIDEKIQ_BRIDGE_SCREENSHOTS
  ? resolve(process.env.SIDEKIQ_BRIDGE_SCREENSHOTS)
  : join(import.meta.dirname, "..", "..", ".screenshots");

/** A number as the dashboard prints it: "12,345" -> 12345. */
export function num(text: string | null | undefined): number {
  return Number((text ?? "").replace(/,/g, "").trim());
}

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  /** A new tab whose console errors and page errors land in `errors`. */
  newPage(): Promise<{ page: Page; errors: string[] }>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), "sidekiq-bridge-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") errors.push(m.text());
      });
      page.on("pageerror", (e) => errors.push(e.message));
      // A dialog other than a confirmation (an alert from injected script) is a failure.
      page.on("dialog", (d) => {
        if (d.type() !== "confirm") errors.push(`unexpected ${d.type()}: ${d.message()}`);
        void d.accept();
      });
      return { page, errors };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
