// prom-client, an optional peer dependency: loaded only when metrics are asked for.
import type * as Prom from "prom-client";

/** The prom-client module, loaded only when metrics are used (an optional peer dependency). */
export type PromClient = typeof Prom;

let loaded: Promise<PromClient> | undefined;

/** prom-client, or a clear error when it is not installed. */
export function loadPromClient(): Promise<PromClient> {
  loaded ??= import("prom-client").then(
    (m) => ((m as unknown as { default?: PromClient }).default ?? m) as PromClient,
    (e: Error) => {
      loaded = undefined;
      throw new Error(`metrics need the prom-client package: npm install prom-client (${e.message})`);
    },
  );
  return loaded;
}
