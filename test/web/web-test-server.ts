// A throwaway redis-server and dashboards served on it over node:http, for the
// web tests: `useWebTestServer()` starts Redis before the file's tests and
// closes every dashboard it served after them. A request the dashboard does
// not take (outside its base path) reaches "the app's own route" (418).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { startRedis, type RedisServer } from "../../harness/redis-server.js";
import { type WebHandler, type WebOptions } from "../../src/tools/web/handler.js";
import { createWebHandler } from "../../src/assembly/web.js";

export interface WebTestServer {
  /** A client on the throwaway Redis (set once the file's beforeAll ran). */
  redis: Redis;
  /** Serves a dashboard on that Redis; returns its URL. */
  serve(opts?: Partial<WebOptions>): Promise<string>;
}

export function useWebTestServer(): WebTestServer {
  let server: RedisServer | undefined;
  const opened: Array<{ http: Server; web: WebHandler }> = [];
  const env: WebTestServer = {
    redis: undefined as unknown as Redis,
    async serve(opts = {}) {
      const web = createWebHandler({ redis: server!.url, ...opts });
      const http = createServer((req, res) => {
        void web(req, res, () => {
          res.statusCode = 418;
          res.end("the app's own route");
        });
      });
      await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
      opened.push({ http, web });
      return `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    },
  };
  beforeAll(async () => {
    server = await startRedis({ databases: 1 });
    env.redis = new Redis(server.url);
  });
  afterAll(async () => {
    for (const { http, web } of opened) {
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
      await web.close();
    }
    env.redis?.disconnect();
    await server?.stop();
  });
  return env;
}
