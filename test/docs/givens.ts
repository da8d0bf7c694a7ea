// What a documentation snippet may use without declaring it, and the types of
// the web frameworks the docs mount the dashboard in.
//
// A snippet that continues an earlier one (it calls `worker.register…` on the
// worker of the block above) names what it takes from outside in its fence:
// ```ts assumes=worker,productIds. Each key here is such a name, declared with
// the type a reader has for it at that point, through the public entry points
// only, so a snippet is checked against exactly what a user can import.

/** The names a fence's `assumes=` may list, each with its declaration. */
export const GIVENS: Readonly<Record<string, string>> = {
  // The objects the README's and the guides' earlier blocks create.
  sidekiq: 'declare const sidekiq: import("sidekiq-bridge").Client;',
  client: 'declare const client: import("sidekiq-bridge").Client;',
  worker: 'declare const worker: import("sidekiq-bridge").Worker;',
  redis: 'declare const redis: import("ioredis").Redis;',
  // The dashboard's handler (docs/WEB.md, "Mount it in your app").
  dashboard: 'declare const dashboard: import("sidekiq-bridge/web").WebHandler;',
  // An Express-like app, for a one-line mount.
  app: 'declare const app: import("express").Express;',
  // The reader's own code the examples call.
  rawFromRedis: "declare const rawFromRedis: string;",
  isAdmin: 'declare function isAdmin(req: import("node:http").IncomingMessage): boolean;',
  productIds: "declare function productIds(shopId: number): number[];",
  reindex:
    "declare function reindex(shopId: number, productId: number, options: { signal: AbortSignal }): Promise<void>;",
  log: "declare function log(message: string): void;",
  // docs/TESTING.md: the service under test.
  signUp: "declare function signUp(email: string): Promise<number>;",
};

/**
 * Express 5, Fastify 5, Hono 4 and @hono/node-server 1 are not dependencies of
 * the package; these are the few of their declarations the docs use, with the
 * shapes their own types give them (the request and response a handler gets
 * are node:http's, which is what the dashboard's handler takes).
 */
export const FRAMEWORK_TYPES = `
declare module "express" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export interface Request extends IncomingMessage { body?: unknown; originalUrl: string }
  export interface Response extends ServerResponse {}
  export type NextFunction = (err?: unknown) => void;
  export type RequestHandler = (req: Request, res: Response, next: NextFunction) => void;
  export interface Express {
    use(handler: RequestHandler): this;
    use(path: string, handler: RequestHandler): this;
    listen(port: number, callback?: () => void): import("node:http").Server;
  }
  interface ExpressFactory {
    (): Express;
    urlencoded(options: { extended: boolean }): RequestHandler;
  }
  const express: ExpressFactory;
  export default express;
}

declare module "fastify" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export interface FastifyRequest { raw: IncomingMessage }
  export interface FastifyReply { raw: ServerResponse; hijack(): void }
  export type RouteHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void> | void;
  export interface FastifyInstance {
    register(plugin: (scope: FastifyInstance) => Promise<void>): this;
    removeAllContentTypeParsers(): void;
    addContentTypeParser(
      type: string,
      parser: (request: FastifyRequest, payload: IncomingMessage, done: (err: Error | null, body?: unknown) => void) => void,
    ): void;
    all(path: string, handler: RouteHandler): this;
    listen(options: { port: number; host?: string }): Promise<string>;
  }
  export default function Fastify(options?: object): FastifyInstance;
}

declare module "hono" {
  export interface Context<E extends { Bindings: object }> { env: E["Bindings"] }
  export class Hono<E extends { Bindings: object } = { Bindings: object }> {
    all(path: string, handler: (c: Context<E>) => Promise<Response> | Response): this;
    fetch: (request: Request) => Response | Promise<Response>;
  }
}

declare module "@hono/node-server" {
  import type { IncomingMessage, ServerResponse } from "node:http";
  export type HttpBindings = { incoming: IncomingMessage; outgoing: ServerResponse };
  export function serve(options: { fetch: (request: Request) => Response | Promise<Response>; port?: number }): unknown;
}

declare module "@hono/node-server/utils/response" {
  export const RESPONSE_ALREADY_SENT: Response;
}
`;
