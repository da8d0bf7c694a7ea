// How a sidekiq-bridge process tells itself apart in a mixed fleet: the label
// it adds to its heartbeat's `info.labels`, which Ruby's Web UI shows and the
// API, the audit and `dialect: "auto"` read to tell Node processes from Ruby ones.

/** Label that sidekiq-bridge processes put in their heartbeat `info.labels`. */
export const BRIDGE_LABEL = "sidekiq-bridge";

// Which JavaScript runtime this process runs on, for the places that name it
// (the dashboard's footer, the worker's "started" log line). Bun and Deno
// both answer Node's `process.versions.node` with the Node release they
// emulate, so they are told apart by their own globals first.

export interface JavaScriptRuntime {
  name: "Node" | "Bun" | "Deno";
  version: string;
}

interface RuntimeGlobals {
  Bun?: { version?: unknown };
  Deno?: { version?: { deno?: unknown } };
}

export function javascriptRuntime(scope: RuntimeGlobals = globalThis as RuntimeGlobals): JavaScriptRuntime {
  const bun = scope.Bun?.version;
  if (typeof bun === "string") return { name: "Bun", version: bun };
  const deno = scope.Deno?.version?.deno;
  if (typeof deno === "string") return { name: "Deno", version: deno };
  return { name: "Node", version: process.versions.node };
}

/** "Node 24.12.0", "Bun 1.4.4", "Deno 2.9.6". */
export function javascriptRuntimeLabel(runtime: JavaScriptRuntime = javascriptRuntime()): string {
  return `${runtime.name} ${runtime.version}`;
}
