// What every page and action of the dashboard receives.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SidekiqApi } from "../../core/api/sidekiq-api.js";

export interface WebRequest {
  req: IncomingMessage;
  res: ServerResponse;
  api: SidekiqApi;
  /** The mount path without a trailing slash ("" at the root). */
  base: string;
  /** The path below the mount, starting with "/". */
  path: string;
  query: URLSearchParams;
  /** Route parameters, decoded. */
  params: string[];
  /** The CSRF token to put in forms. */
  csrf: string;
  readOnly: boolean;
  /** Seconds between the dashboard's live updates. */
  pollSeconds: number;
  /** The dashboard extensions' resolved options, by name (WebTab.settings). */
  extensions: ReadonlyMap<string, unknown>;
  /** A form's fields (POST only). */
  form: URLSearchParams;
  /**
   * Set by a page that reads every process's `busy` field anyway (Busy),
   * before its first await: the summary bar takes `Stats#workers_size` from
   * it instead of reading the fleet a second time.
   */
  workersSize?: Promise<number>;
}

/** A link below the mount path. */
export function href(
  w: Pick<WebRequest, "base">,
  path: string,
  query?: Record<string, string | number | undefined>,
): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== "") q.set(k, String(v));
  const qs = q.toString();
  return `${w.base}${path}${qs ? `?${qs}` : ""}`;
}
