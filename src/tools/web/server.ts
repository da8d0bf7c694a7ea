// The dashboard on its own node:http server (what `sidekiq-bridge web` runs).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createWebHandler, type WebHandler, type WebOptions } from "./handler.js";
import type { WebTab } from "./route.js";

/** A running dashboard server (`startWebServer`): its URL, the HTTP server, the handler and `close()`. */
export interface WebServer {
  server: Server;
  handler: WebHandler;
  /** e.g. http://127.0.0.1:9292/ */
  url: string;
  close(): Promise<void>;
}

/**
 * Listens on `host` (default 127.0.0.1: not reachable from other machines
 * unless asked) and `port` (0: any free), serving the dashboard with `tabs`.
 */
export async function startWebServer(
  options: WebOptions & { port?: number; host?: string },
  tabs: readonly WebTab[],
): Promise<WebServer> {
  const handler = createWebHandler(options, tabs);
  const server = createServer((req, res) => void handler(req, res));
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 9292, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const base = options.basePath ? `/${options.basePath.replace(/^\/+|\/+$/g, "")}/` : "/";
  return {
    server,
    handler,
    url: `http://${shownHost}:${addr.port}${base.replace(/\/+$/, "/")}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await handler.close();
    },
  };
}
