// `sidekiq-bridge worker`: a Node process in the Sidekiq fleet, with
// Sidekiq's own flags (-q queue[,weight], -c, -g, -t, -r).
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { addons } from "./registry.js";
import { resolveOptions, WorkerOptionError } from "../core/config/resolve.js";
import type { CoreWorkerOptions } from "../core/config/worker-options.js";
import { Worker, type WorkerOptions } from "./worker.js";
import type { UnknownClassPolicy } from "../core/server/processor.js";
import { DialectDetectionError } from "../core/client/errors.js";
import { profileFor } from "../core/wire/dialect.js";
import { consoleLogger, toLogger, type LoggerLike, type LogFormat, type LogLevel } from "../core/logging/logger.js";
import { childArgv, processesFlag, superviseSwarm } from "../tools/cli/swarm.js";
import { joinSwarm, swarmChild, swarmSignalExit } from "../tools/cli/swarm-child.js";

export const summary = "run a Node worker in the Sidekiq fleet";

export const help = `Usage: sidekiq-bridge worker [options]

Runs a Node worker that takes jobs from Sidekiq queues, alongside Ruby Sidekiq.

Options:
  -q, --queue NAME[,WEIGHT]   queue to process (repeatable; default: default)
  -c, --concurrency N         jobs at once (default 5)
  -g, --tag TAG               process tag shown in the Web UI
  -t, --timeout SECONDS       shutdown timeout before running jobs are pushed back (default 25)
  -r, --require MODULE        module registering handlers: export default (worker) => { worker.register(...) }
                              or export an object { ClassName: handler }; an exported \`logger\`
                              (pino or any (msg, ctx) logger) replaces the default one
      --redis URL             Redis URL (default: $REDIS_URL or redis://127.0.0.1:6379/0)
      --sentinel HOST:PORT    use Redis Sentinel (repeatable) instead of --redis
      --sentinel-name NAME    the master's name in Sentinel (default mymaster)
      --fetch MODE            reliable (default: nothing lost if this process dies) or basic (Sidekiq's BRPOP)
      --dialect D             auto (default), 6, 7, 8 or an exact Sidekiq version
      --fallback D            dialect to use when auto finds no live Ruby process
      --unknown POLICY        job class without handler: retry (default, like Sidekiq), requeue, dead
      --label LABEL           extra label for the Web UI (repeatable)
${addons()
  .flatMap((a) =>
    a.flag ? [`      --${`${a.flag.name}${a.flag.value ? ` ${a.flag.value}` : ""}`.padEnd(22)}${a.flag.help}`] : [],
  )
  .join("\n")}
      --run-without ADDON     run jobs marked by an add-on this worker does not run (uniqueJobs,
                              proBatches...) instead of handing them back to their queue (repeatable)
      --log-level LEVEL       debug, info (default), warn or error
      --log-format FORMAT     text (Sidekiq's lines, default) or json (Sidekiq's JSON formatter)
      --json                  the same as --log-format json
      --metrics-port N        serve this worker's Prometheus metrics on 127.0.0.1:N/metrics
                              (needs the prom-client package)
      --processes N           run N worker processes under one supervisor (default 1: just this
                              process); each child is a full worker with its own identity, a dead
                              one is replaced; --metrics-port N gives child i the port N + i
  -h, --help                  this help
      --version               the version of sidekiq-bridge

Signals: TERM/INT stop (jobs still running after the timeout go back to their queues),
TSTP quiets, TTIN logs what each slot is doing. Quiet and Stop from the Web UI work too.
A stop takes at most the timeout plus 3 s, whatever Redis does; a second TERM or INT exits at once.

Exit codes: 0 stopped, everything handed back and cleared; 1 could not start (Redis unreachable
within 5 s, bad options, a bad handler module); 3 stopped, but Redis was unreachable: unfinished
jobs stay in the working lists for recovery (basic fetch: lost), the heartbeat expires by itself;
130 / 143 a second INT / TERM cut the stop short. With --processes, the supervisor forwards
TERM, INT, TSTP and TTIN to its children and exits with the highest of their codes (1 when a child
could not start or crash-looped).`;

/** The flag that sets each checked worker option, for errors that name what the user typed. */
const FLAG_OF: Partial<Record<keyof CoreWorkerOptions, string>> = {
  fetch: "--fetch",
  unknownClass: "--unknown",
  logLevel: "--log-level",
  logFormat: "--log-format",
  timeout: "--timeout",
  concurrency: "--concurrency",
};

const OPTIONS = {
  queue: { type: "string", short: "q", multiple: true },
  concurrency: { type: "string", short: "c" },
  tag: { type: "string", short: "g" },
  timeout: { type: "string", short: "t" },
  require: { type: "string", short: "r" },
  redis: { type: "string" },
  dialect: { type: "string" },
  fallback: { type: "string" },
  unknown: { type: "string" },
  label: { type: "string", multiple: true },
  sentinel: { type: "string", multiple: true },
  "sentinel-name": { type: "string" },
  fetch: { type: "string" },
  // Each add-on's flag (--no-cron): from its entry in the add-on registry.
  ...Object.fromEntries(
    addons().flatMap((a) => (a.flag ? [[a.flag.name, { type: a.flag.value ? "string" : "boolean" } as const]] : [])),
  ),
  "run-without": { type: "string", multiple: true },
  json: { type: "boolean" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
  "metrics-port": { type: "string" },
  processes: { type: "string" },
} as const;

export async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true });
  const num = (name: string, v: string | undefined, dflt: number) => {
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${v}"`);
    return n;
  };
  const sentinels = (values.sentinel ?? []).map((s) => {
    const m = /^(.+):(\d+)$/.exec(s);
    if (!m) throw new Error(`--sentinel must be HOST:PORT, got "${s}"`);
    return { host: m[1]!, port: Number(m[2]) };
  });
  const logLevel = (values["log-level"] ?? "info") as LogLevel;
  const logFormat = (values["log-format"] ?? (values.json ? "json" : "text")) as LogFormat;
  const opts: WorkerOptions = {
    logLevel,
    logFormat,
    redis: sentinels.length
      ? { sentinels, name: values["sentinel-name"] ?? "mymaster" }
      : (values.redis ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379/0"),
    fetch: (values.fetch ?? "reliable") as "reliable",
    queues: values.queue?.length ? values.queue : ["default"],
    concurrency: num("concurrency", values.concurrency, 5),
    timeout: num("timeout", values.timeout, 25),
    tag: values.tag ?? "",
    labels: values.label ?? [],
    unknownClass: (values.unknown ?? "retry") as UnknownClassPolicy,
    dialect: values.dialect ?? "auto",
  };
  if (values.fallback) opts.autoFallback = values.fallback;
  if (values["run-without"]?.length) opts.runWithout = values["run-without"];
  // Each add-on's flag: a switch turns it off (on by default) or on; a valued flag is parsed by the add-on.
  const addonFlags = new Map<string, unknown>();
  for (const a of addons()) {
    const given = a.flag && (values as Record<string, unknown>)[a.flag.name];
    if (given === undefined || given === false || !a.flag) continue;
    addonFlags.set(a.name, a.flag.parse && typeof given === "string" ? a.flag.parse(given) : !a.onByDefault);
  }
  Object.assign(opts, Object.fromEntries(addonFlags));
  try {
    // The same checks as the library's, once, named by flag: before any child is forked.
    resolveOptions(opts);
  } catch (e) {
    const flag = e instanceof WorkerOptionError ? FLAG_OF[e.option] : undefined;
    if (flag && e instanceof WorkerOptionError)
      throw new Error(`${flag} must be ${e.must}, got "${String(e.got)}"`, { cause: e });
    throw e;
  }
  // A bad value is named by its flag, not by the library option it feeds.
  for (const [flag, value] of [
    ["--dialect", values.dialect === "auto" ? undefined : values.dialect],
    ["--fallback", values.fallback],
  ] as const) {
    if (value === undefined) continue;
    try {
      profileFor(value);
    } catch (e) {
      throw new Error(`${flag}: ${(e as Error).message}`, { cause: e });
    }
  }
  // Every flag is checked once, here, before any child is forked.
  const processes = processesFlag(values.processes);
  if (processes > 1)
    return superviseSwarm({
      processes,
      argv: childArgv(argv, OPTIONS),
      logger: consoleLogger({ level: logLevel, format: logFormat }),
    });
  const swarm = swarmChild(); // forked by a supervisor (swarm.ts)?
  // The handlers module is loaded first: its exported `logger` is the worker's.
  const mod = values.require
    ? ((await import(pathToFileURL(resolve(values.require)).href)) as { default?: unknown; logger?: unknown })
    : undefined;
  if (mod?.logger !== undefined) {
    if (
      typeof mod.logger !== "object" ||
      mod.logger === null ||
      typeof (mod.logger as { info?: unknown }).info !== "function"
    )
      throw new Error(`${values.require} exports a \`logger\` without an info method`);
    opts.logger = mod.logger as LoggerLike;
  }
  // A handlers module may turn add-ons on under their option names (`export const uniqueJobs = { gem: 9 }`);
  // a flag on the command line wins.
  for (const a of addons()) {
    const exported = (mod as Record<string, unknown> | undefined)?.[a.name];
    if (exported !== undefined && !addonFlags.has(a.name))
      (opts as unknown as Record<string, unknown>)[a.name] = exported;
  }
  const worker = new Worker(opts);
  if (mod) {
    const exp = mod.default ?? mod;
    if (typeof exp === "function") await (exp as (w: Worker) => unknown)(worker);
    else if (exp && typeof exp === "object") {
      for (const [name, fn] of Object.entries(exp))
        if (typeof fn === "function" && name !== "logger" && !addons().some((a) => a.name === name))
          worker.register(name, fn as never);
    } else throw new Error(`${values.require} exports neither a function nor an object of handlers`);
  }
  if (values["metrics-port"] !== undefined) {
    const port = num("metrics-port", values["metrics-port"], 0) + (swarm?.index ?? 0);
    const { instrumentWorker, serveMetrics } = await import("../tools/metrics/prometheus.js");
    const server = await serveMetrics({ port }, await instrumentWorker(worker));
    server.unref();
  }
  // In a swarm, its lines go where the worker's go.
  const swarmLog = swarm && toLogger(opts.logger ?? consoleLogger({ level: logLevel, format: logFormat }));
  worker.handleSignals(swarm && swarmLog ? swarmSignalExit(swarm, swarmLog) : undefined);
  try {
    await worker.start();
  } catch (e) {
    // The library's message names its options (dialect, autoFallback); name the flags here.
    if (e instanceof DialectDetectionError)
      throw new Error(
        "--dialect auto found no live Ruby Sidekiq process in this Redis, so it cannot tell which timestamp format the fleet reads. Pass --dialect 6, 7, 8 (or an exact version such as 7.3.2), or --fallback D for when no Ruby process is live.",
        { cause: e },
      );
    throw e;
  }
  if (swarm && swarmLog) await joinSwarm(swarm, worker.identity, opts.redis, swarmLog);
  return new Promise<number>(() => {}); // runs until a signal stops it
}
