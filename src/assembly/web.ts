// The web dashboard: a handler to mount in any Node app, or a server of its
// own, with the add-ons' tabs (sidekiq-cron's Cron, sidekiq-unique-jobs'
// Locks). The dashboard (src/tools/web/) takes its tabs as an argument; this
// entry gives it the registry's.
import { createWebHandler as dashboardHandler, type WebHandler, type WebOptions } from "../tools/web/handler.js";
import { startWebServer as serveDashboard, type WebServer } from "../tools/web/server.js";
import { webTabs } from "./registry.js";

export type { WebHandler, WebOptions };

/** The dashboard as a `(req, res, next?)` handler for node:http, Express, Fastify or Hono (docs/WEB.md). */
export function createWebHandler(options: WebOptions): WebHandler {
  return dashboardHandler(options, webTabs());
}

/** Listens on `host` (default 127.0.0.1: not reachable from other machines unless asked) and `port` (0: any free). */
export function startWebServer(options: WebOptions & { port?: number; host?: string }): Promise<WebServer> {
  return serveDashboard(options, webTabs());
}
