// A dashboard route, and a tab an add-on contributes (its nav link and its
// routes): the dashboard's own pages and the add-ons' tabs share one shape.
import type { Html } from "./html.js";
import type { WebRequest } from "./request.js";

/** Renders a page's body. */
export type Page = (w: WebRequest) => Promise<Html>;
/** Acts on a POST; returns where to redirect. */
export type Action = (w: WebRequest) => Promise<string>;

export interface Route {
  method: "GET" | "POST";
  pattern: RegExp;
  title: string;
  page?: Page;
  action?: Action;
}

/**
 * A dashboard extension (Sidekiq::Web's `register_extension`): a tab of the
 * navigation, the routes behind it, and its own options, which the dashboard
 * carries without reading them.
 */
export interface WebTab {
  /** The tab's path, e.g. "/cron"; its routes live at and below it. */
  path: string;
  label: string;
  routes: Route[];
  /** Its name in `WebOptions.extensions` (the add-on's name, e.g. "cron"). */
  name?: string;
  /**
   * Its options (`WebOptions.extensions[name]`, undefined when not given) as
   * its pages read them, resolved once when the handler is made; throws on a
   * bad value, so the handler refuses it at once.
   */
  settings?(raw: unknown): unknown;
}

/** A page or action from a module loaded on first use, so a worker that never serves the dashboard never loads it. */
export function lazy<M, K extends keyof M>(
  load: () => Promise<M>,
  name: K,
): M[K] extends (w: WebRequest) => infer R ? (w: WebRequest) => R : never {
  return (async (w: WebRequest) => ((await load())[name] as (w: WebRequest) => unknown)(w)) as never;
}
