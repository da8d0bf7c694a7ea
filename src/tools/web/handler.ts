// The dashboard as one request handler: `(req, res, next?)` on node:http's
// IncomingMessage/ServerResponse, so it mounts in a plain http server,
// Express (`app.use`), Fastify (`reply.hijack()`) or Hono on Node.
//
//   const web = createWebHandler({ redis: process.env.REDIS_URL, basePath: "/sidekiq" });
//   http.createServer((req, res) => web(req, res)).listen(9292, "127.0.0.1");
import type { IncomingMessage, ServerResponse } from "node:http";
import { SidekiqApi, type ApiOptions } from "../../core/api/sidekiq-api.js";
import type { RedisSource } from "../../core/redis/connection.js";
import {
  ActionError,
  busyAction,
  clearQueueAction,
  deleteQueueJobAction,
  setAllAction,
  setSelectedAction,
} from "./actions.js";
import { DASHBOARD_CSS } from "./assets/dashboard-css.js";
import { DASHBOARD_JS } from "./assets/dashboard-js.js";
import { FAVICON_SVG } from "./assets/favicon.js";
import {
  CSRF_COOKIE,
  CSRF_FIELD,
  newBrowserId,
  newSecret,
  parseCookies,
  sameOrigin,
  tokenFor,
  validToken,
} from "./csrf.js";
import { permissionLine } from "../../core/redis/acl.js";
import { fetchStats } from "../../core/api/stats.js";
import { html } from "./html.js";
import { CORE_TABS, layout, type Tab } from "./layout.js";
import { busyPage } from "./pages/busy.js";
import { bulkResultPage } from "./pages/bulk-result.js";
import { dashboardPage } from "./pages/dashboard.js";
import { jobSetEntryPage, jobSetPage, SET_VIEWS, type SetView } from "./pages/job-sets.js";
import { metricsForJobPage, metricsPage } from "./pages/metrics.js";
import { queuePage, queuesPage } from "./pages/queues.js";
import type { WebRequest } from "./request.js";
import type { Route, WebTab } from "./route.js";
import { entriesForKey } from "./set-entries.js";

/** Options of the dashboard: the Redis, base path, read-only mode and the `authorize` hook. */
export interface WebOptions {
  /** The Redis to read (a URL, options, or your app's ioredis instance, which is never closed). */
  redis?: RedisSource;
  /** An API you already have (instead of `redis`). */
  api?: SidekiqApi;
  /** Options for the API this handler opens on `redis` (dialect, apiVersion, dead-set limits). */
  apiOptions?: Omit<ApiOptions, "redis">;
  /** Where the dashboard is mounted, e.g. "/sidekiq" (default: the root). */
  basePath?: string;
  /** Show everything, change nothing: every POST is refused and no buttons are drawn. */
  readOnly?: boolean;
  /** Called for every request; anything but true (or a rejection) answers 403. */
  authorize?: (req: IncomingMessage) => boolean | Promise<boolean>;
  /** Seconds between the summary bar's live updates (default 5). */
  pollSeconds?: number;
  /**
   * The key CSRF tokens are signed with (at least 32 bytes). Default: random per
   * handler; give every process the same one when a load balancer spreads a
   * browser's requests over several.
   */
  csrfSecret?: string | Buffer;
  /**
   * Each extension's own options, by its name (docs/WEB.md): `cron:
   * { namespaces: ["default", "billing"] }` (sidekiq-cron's
   * `available_namespaces`; default: every namespace found by SCAN),
   * `uniqueJobs: { gem: 9 }` (the fleet's sidekiq-unique-jobs; default 8).
   */
  extensions?: Record<string, unknown>;
  /** @deprecated `extensions: { cron: { namespaces } }`. */
  cronNamespaces?: string[];
  /** @deprecated `extensions: { uniqueJobs }`. */
  uniqueJobs?: { gem?: 8 | 9; maxHistory?: number };
}

/** Each extension's options resolved by the extension itself; the two names of earlier releases read as theirs. */
export function extensionSettings(options: WebOptions, tabs: readonly WebTab[]): Map<string, unknown> {
  const given: Record<string, unknown> = {
    ...(options.cronNamespaces ? { cron: { namespaces: options.cronNamespaces } } : {}),
    ...(options.uniqueJobs ? { uniqueJobs: options.uniqueJobs } : {}),
    ...options.extensions,
  };
  const named = new Set(tabs.map((t) => t.name));
  const unknown = Object.keys(given).filter((k) => !named.has(k));
  if (unknown.length > 0)
    throw new Error(
      `createWebHandler: no dashboard extension is named ${unknown.map((k) => `"${k}"`).join(", ")} (extensions: ${[...named].join(", ")})`,
    );
  const out = new Map<string, unknown>();
  for (const t of tabs) if (t.name) out.set(t.name, t.settings ? t.settings(given[t.name]) : given[t.name]);
  return out;
}

/** A request handler serving the dashboard under its base path. */
export interface WebHandler {
  (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void): Promise<void>;
  /** Closes the Redis connection if the handler opened it. */
  close(): Promise<void>;
}

/** The most a form body may hold. */
const MAX_BODY = 1024 * 1024;

/** The Content-Security-Policy header the dashboard sends (no inline script or style). */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function setRoutes(name: string, view: SetView): Route[] {
  const p = view.path;
  return [
    { method: "GET", pattern: new RegExp(`^${p}$`), title: view.title, page: (w) => jobSetPage(w, view) },
    { method: "POST", pattern: new RegExp(`^${p}/selected$`), title: name, action: (w) => setSelectedAction(w, view) },
    { method: "POST", pattern: new RegExp(`^${p}/all$`), title: name, action: (w) => setAllAction(w, view) },
    {
      method: "GET",
      pattern: new RegExp(`^${p}/bulk-result$`),
      title: view.title,
      page: (w) => bulkResultPage(w, view),
    },
    {
      method: "GET",
      pattern: new RegExp(`^${p}/([^/]+)$`),
      title: view.title,
      page: async (w) => {
        const [entry] = await entriesForKey(w.api.set(view.set), w.params[0]!);
        return jobSetEntryPage(w, view, entry);
      },
    },
  ];
}

/** The dashboard's own routes; the extensions' follow them (`resourcesOf`). */
const ROUTES: Route[] = [
  { method: "GET", pattern: /^\/$/, title: "Dashboard", page: dashboardPage },
  { method: "GET", pattern: /^\/busy$/, title: "Busy", page: busyPage },
  { method: "POST", pattern: /^\/busy$/, title: "Busy", action: busyAction },
  { method: "GET", pattern: /^\/queues$/, title: "Queues", page: queuesPage },
  { method: "GET", pattern: /^\/queues\/([^/]+)$/, title: "Queue", page: queuePage },
  { method: "POST", pattern: /^\/queues\/([^/]+)\/clear$/, title: "Queue", action: clearQueueAction },
  { method: "POST", pattern: /^\/queues\/([^/]+)\/delete$/, title: "Queue", action: deleteQueueJobAction },
  ...Object.entries(SET_VIEWS).flatMap(([name, view]) => setRoutes(name, view)),
  { method: "GET", pattern: /^\/metrics$/, title: "Metrics", page: metricsPage },
  { method: "GET", pattern: /^\/metrics\/([^/]+)$/, title: "Metrics", page: metricsForJobPage },
];

/** One URL pattern and the routes (one per method) it answers. */
interface Resource {
  pattern: RegExp;
  routes: Route[];
}

/**
 * A path names one resource: the first pattern in ROUTES that matches it, with
 * every method routed on that pattern. So `/retries/all` is the Retry All
 * action, which answers a GET with 405, and never the page of a job whose key
 * is "all", which the looser single-job pattern after it would also match. An
 * action route therefore comes before any page pattern that could match its
 * path (the tests GET every action URL and expect 405).
 */
function resourcesOf(routes: readonly Route[]): Resource[] {
  const resources: Resource[] = [];
  for (const route of routes) {
    const same = resources.find((r) => r.pattern.source === route.pattern.source);
    if (same) same.routes.push(route);
    else resources.push({ pattern: route.pattern, routes: [route] });
  }
  return resources;
}

function securityHeaders(res: ServerResponse): void {
  res.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.statusCode = status;
  res.setHeader("Content-Type", type);
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.end(body);
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  // A framework may have parsed the body already (Express's urlencoded()).
  const parsed = (req as { body?: unknown }).body;
  if (parsed && typeof parsed === "object" && !Buffer.isBuffer(parsed)) {
    const out = new URLSearchParams();
    for (const [k, v] of Object.entries(parsed as Record<string, unknown>))
      for (const x of Array.isArray(v) ? v : [v]) out.append(k, String(x));
    return out;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ActionError("the form is too large");
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function normalizeBase(b: string | undefined): string {
  if (!b || b === "/") return "";
  return `/${b.replace(/^\/+|\/+$/g, "")}`;
}

/**
 * The dashboard as a `(req, res, next?)` handler for node:http, Express,
 * Fastify or Hono (docs/WEB.md), with the extensions' `tabs` after its own
 * (the add-ons' tabs, given by src/assembly/web.ts: the dashboard imports no
 * add-on). They show always, with an empty state, as Ruby's Web UI shows them
 * once the gems are loaded.
 */
export function createWebHandler(options: WebOptions, tabs: readonly WebTab[]): WebHandler {
  if (!options.api && options.redis === undefined) throw new Error("createWebHandler: pass `redis` or `api`");
  // Checked before a connection is opened: a refused option leaves nothing holding the process.
  const extensions = extensionSettings(options, tabs);
  // The navigation and routes: the dashboard's own, then the extensions' (sidekiq-cron's Cron, on its gem's routes).
  const navigation: readonly Tab[] = [...CORE_TABS, ...tabs.map((t): Tab => [t.path, t.label])];
  const resources = resourcesOf([...ROUTES, ...tabs.flatMap((t) => t.routes)]);
  const api = options.api ?? new SidekiqApi({ ...options.apiOptions, redis: options.redis! });
  const ownsApi = !options.api;
  const base = normalizeBase(options.basePath);
  const readOnly = options.readOnly === true;
  const pollSeconds = options.pollSeconds ?? 5;
  const secret = options.csrfSecret === undefined ? newSecret() : Buffer.from(options.csrfSecret);
  if (secret.length < 32) throw new Error("createWebHandler: csrfSecret must be at least 32 bytes");

  const errorPage = (res: ServerResponse, status: number, message: string) => {
    securityHeaders(res);
    send(
      res,
      status,
      "text/html; charset=utf-8",
      html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${status} · Sidekiq</title><link rel="icon" href="${base}/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="${base}/assets/dashboard.css"></head><body><main><div class="error-page"><h1>${status}</h1><p>${message}</p><p><a href="${base}/">Back to the dashboard</a></p></div></main></body></html>`
        .text,
    );
  };

  const handler = (async (req, res, next) => {
    const full = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
    const url = new URL(full, "http://dashboard.invalid");
    let path = url.pathname;
    if (base) {
      if (path !== base && !path.startsWith(`${base}/`)) {
        if (next) return next();
        return errorPage(res, 404, "Not found");
      }
      path = path.slice(base.length) || "/";
    }
    try {
      if (options.authorize) {
        let allowed = false;
        try {
          allowed = (await options.authorize(req)) === true;
        } catch {
          // A failing hook denies: it must never open the dashboard by accident.
        }
        if (!allowed) return errorPage(res, 403, "Forbidden");
      }
      const method = req.method === "HEAD" ? "GET" : (req.method ?? "GET");
      securityHeaders(res);
      if (method === "GET" && path === "/assets/dashboard.css")
        return send(res, 200, "text/css; charset=utf-8", DASHBOARD_CSS, { "Cache-Control": "public, max-age=3600" });
      if (method === "GET" && path === "/assets/dashboard.js")
        return send(res, 200, "text/javascript; charset=utf-8", DASHBOARD_JS, {
          "Cache-Control": "public, max-age=3600",
        });
      if (method === "GET" && path === "/assets/favicon.svg")
        return send(res, 200, "image/svg+xml", FAVICON_SVG, { "Cache-Control": "public, max-age=3600" });
      if (method === "GET" && path === "/stats.json") {
        const s = await api.stats();
        return send(
          res,
          200,
          "application/json",
          JSON.stringify({
            processed: s.processed,
            failed: s.failed,
            busy: s.workersSize,
            processes: s.processesSize,
            enqueued: s.enqueued,
            retries: s.retrySize,
            scheduled: s.scheduledSize,
            dead: s.deadSize,
            default_latency: s.defaultQueueLatency,
          }),
          { "Cache-Control": "no-store" },
        );
      }
      const resource = resources.find((r) => r.pattern.test(path));
      if (!resource) return errorPage(res, 404, "Not found");
      const route = resource.routes.find((r) => r.method === method);
      if (!route) {
        res.setHeader("Allow", resource.routes.map((r) => r.method).join(", "));
        return errorPage(res, 405, `${method} is not allowed here`);
      }
      const params = route.pattern
        .exec(path)!
        .slice(1)
        .map((p) => decodeURIComponent(p));
      const cookies = parseCookies(req.headers.cookie);
      let browserId = cookies[CSRF_COOKIE];
      const w: WebRequest = {
        req,
        res,
        api,
        base,
        path,
        query: url.searchParams,
        params,
        csrf: "",
        readOnly,
        pollSeconds,
        extensions,
        form: new URLSearchParams(),
      };
      if (route.action) {
        if (readOnly) return errorPage(res, 403, "This dashboard is read-only");
        if (!sameOrigin(req)) return errorPage(res, 403, "The request came from another origin");
        w.form = await readForm(req);
        if (!validToken(secret, browserId, w.form.get(CSRF_FIELD) ?? undefined))
          return errorPage(res, 403, "Invalid or missing CSRF token: reload the page and try again");
        const to = await route.action(w);
        res.statusCode = 303;
        res.setHeader("Location", to);
        return void res.end();
      }
      if (!browserId) {
        browserId = newBrowserId();
        res.setHeader(
          "Set-Cookie",
          `${CSRF_COOKIE}=${browserId}; Path=${base || "/"}; HttpOnly; SameSite=Strict${(req.socket as { encrypted?: boolean }).encrypted ? "; Secure" : ""}`,
        );
      }
      w.csrf = tokenFor(secret, browserId);
      const page = route.page!(w); // Busy sets w.workersSize before its first await
      const [body, stats] = await Promise.all([page, fetchStats(api, { workersSize: w.workersSize })]);
      const rendered = layout(w, { title: route.title, stats, body, tabs: navigation });
      return send(res, 200, "text/html; charset=utf-8", rendered.text, { "Cache-Control": "no-store" });
    } catch (e) {
      if (e instanceof ActionError || (e instanceof Error && /NotFound|Embedded|JobSetError/.test(e.name)))
        return errorPage(res, 400, e.message);
      if (e instanceof URIError) return errorPage(res, 400, "Malformed URL");
      const text = e instanceof Error ? e.message : String(e);
      return errorPage(res, 500, `Error: ${permissionLine(text, api.redis.options?.username) ?? text}`);
    }
  }) as WebHandler;
  handler.close = async () => {
    if (ownsApi) await api.close();
  };
  return handler;
}
