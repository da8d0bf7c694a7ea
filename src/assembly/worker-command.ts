// `sidekiq-bridge worker`: a Node process in the Sidekiq fleet, with
// Sidekiq's own flags (-q queue[,weight], -c, -g, -t, -r).
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import { addons } from "./registry.js";
import { resolveOptions, WorkerOptionError } from "../core/config/resolve.js";
import type { CoreWorkerOptions } from "../core/config/worker-options.js";
import { Worker, type WorkerOptions } from "./worker.js";
import type { UnknownClassPolicy } from "../core/server/processor.js";
import { DialectDetectionError } from "../core/client/errors.js";
import { consoleLogger, toLogger, type LoggerLike, type LogFormat, type LogLevel } from "../core/logging/logger.js";
import {
  type Args,
  command,
  commandSpec,
  dialect,
  type Flag,
  type Flags,
  parseArgsOptions,
  positive,
  version,
} from "../tools/cli/command.js";
import { UsageError } from "../tools/cli/errors.js";
import { DEFAULT_REDIS_URL } from "../tools/cli/redis-url.js";
import { childArgv, PROCESSES_FLAG, superviseSwarm } from "../tools/cli/swarm.js";
import { joinSwarm, swarmChild, swarmSignalExit } from "../tools/cli/swarm-child.js";

/** The flag that sets each checked worker option, for errors that name what the user typed. */
const FLAG_OF: Partial<Record<keyof CoreWorkerOptions, string>> = {
  fetch: "--fetch",
  unknownClass: "--unknown",
  logLevel: "--log-level",
  logFormat: "--log-format",
  timeout: "--timeout",
  concurrency: "--concurrency",
};

// Each add-on's flag (--no-cron, --unique-jobs GEM): from its entry in the add-on registry.
const ADDON_FLAGS: Record<string, Flag> = Object.fromEntries(
  addons().flatMap((a) => (a.flag ? [[a.flag.name, a.flag]] : [])),
);

const FLAGS = {
  queue: {
    short: "q",
    value: "NAME[,WEIGHT]",
    help: "queue to process (repeatable; default: default)",
    multiple: true,
  },
  concurrency: { short: "c", value: "N", help: "jobs at once (default 5)", parse: positive(), default: 5 },
  tag: { short: "g", value: "TAG", help: "process tag shown in the Web UI", default: "" },
  timeout: {
    short: "t",
    value: "SECONDS",
    help: "shutdown timeout before running jobs are pushed back (default 25)",
    parse: positive(),
    default: 25,
  },
  require: {
    short: "r",
    value: "MODULE",
    help: "module registering handlers: export default (worker) => { worker.register(...) }\nor export an object { ClassName: handler }; an exported `logger`\n(pino or any (msg, ctx) logger) replaces the default one",
  },
  sentinel: {
    value: "HOST:PORT",
    help: "use Redis Sentinel (repeatable) instead of --redis",
    multiple: true,
    parse: sentinel,
  },
  "sentinel-name": { value: "NAME", help: "the master's name in Sentinel (default mymaster)", default: "mymaster" },
  fetch: {
    value: "MODE",
    help: "reliable (default: nothing lost if this process dies) or basic (Sidekiq's BRPOP)",
    default: "reliable",
  },
  dialect: {
    value: "D",
    help: "auto (default), 6, 7, 8 or an exact Sidekiq version",
    parse: dialect,
    default: "auto",
  },
  fallback: { value: "D", help: "dialect to use when auto finds no live Ruby process", parse: version },
  unknown: {
    value: "POLICY",
    help: "job class without handler: retry (default, like Sidekiq), requeue, dead",
    default: "retry",
  },
  label: { value: "LABEL", help: "extra label for the Web UI (repeatable)", multiple: true },
  ...ADDON_FLAGS,
  "run-without": {
    value: "ADDON",
    help: "run jobs marked by an add-on this worker does not run (uniqueJobs,\nproBatches...) instead of handing them back to their queue (repeatable)",
    multiple: true,
  },
  "log-level": { value: "LEVEL", help: "debug, info (default), warn or error", default: "info" },
  "log-format": { value: "FORMAT", help: "text (Sidekiq's lines, default) or json (Sidekiq's JSON formatter)" },
  "metrics-port": {
    value: "N",
    help: "serve this worker's Prometheus metrics on 127.0.0.1:N/metrics\n(needs the prom-client package)",
    parse: positive(),
  },
  processes: PROCESSES_FLAG,
} as const satisfies Flags;

const spec = commandSpec({
  name: "worker",
  summary: "run a Node worker in the Sidekiq fleet",
  usage: "[options]",
  about: "Runs a Node worker that takes jobs from Sidekiq queues, alongside Ruby Sidekiq.",
  flags: FLAGS,
  json: "the same as --log-format json",
  // A worker that cannot start says so as Sidekiq's does: one line, exit 1.
  failures: "throw",
  footer: `Signals: TERM/INT stop (jobs still running after the timeout go back to their queues),
TSTP quiets, TTIN logs what each slot is doing. Quiet and Stop from the Web UI work too.
A stop takes at most the timeout plus 3 s, whatever Redis does; a second TERM or INT exits at once.

Exit codes: 0 stopped, everything handed back and cleared; 1 could not start (Redis unreachable
within 5 s, a bad handler module); 2 bad options; 3 stopped, but Redis was unreachable: unfinished
jobs stay in the working lists for recovery (basic fetch: lost), the heartbeat expires by itself;
130 / 143 a second INT / TERM cut the stop short. With --processes, the supervisor forwards
TERM, INT, TSTP and TTIN to its children and exits with the highest of their codes (1 when a child
could not start or crash-looped).`,
  run: start,
});

export const { summary, help, run } = command(spec);

/** --sentinel HOST:PORT. */
function sentinel(s: string, flag: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(s);
  if (!m) throw new UsageError(`${flag} must be HOST:PORT, got "${s}"`);
  return { host: m[1]!, port: Number(m[2]) };
}

async function start({ values, argv }: Args<typeof FLAGS>): Promise<number> {
  const logLevel = values["log-level"] as LogLevel;
  const logFormat = (values["log-format"] ?? (values.json ? "json" : "text")) as LogFormat;
  const opts: WorkerOptions = {
    logLevel,
    logFormat,
    redis: values.sentinel.length
      ? { sentinels: values.sentinel, name: values["sentinel-name"] }
      : (values.redis ?? process.env.REDIS_URL ?? DEFAULT_REDIS_URL),
    fetch: values.fetch as "reliable",
    queues: values.queue.length ? values.queue : ["default"],
    concurrency: values.concurrency,
    timeout: values.timeout,
    tag: values.tag,
    labels: values.label,
    unknownClass: values.unknown as UnknownClassPolicy,
    dialect: values.dialect,
  };
  if (values.fallback) opts.autoFallback = values.fallback;
  if (values["run-without"].length) opts.runWithout = values["run-without"];
  // Each add-on's flag: a switch turns it off (on by default) or on; a valued flag is the option its parser made.
  const addonFlags = new Map<string, unknown>();
  for (const a of addons()) {
    const given = a.flag && (values as Record<string, unknown>)[a.flag.name];
    if (given === undefined || given === false || !a.flag) continue;
    addonFlags.set(a.name, a.flag.value ? given : !a.onByDefault);
  }
  Object.assign(opts, Object.fromEntries(addonFlags));
  try {
    // The same checks as the library's, once, named by flag: before any child is forked.
    resolveOptions(opts);
  } catch (e) {
    const flag = e instanceof WorkerOptionError ? FLAG_OF[e.option] : undefined;
    if (flag && e instanceof WorkerOptionError)
      throw new UsageError(`${flag} must be ${e.must}, got "${String(e.got)}"`, { cause: e });
    throw e;
  }
  // Every flag is checked once, here, before any child is forked.
  if (values.processes > 1)
    return superviseSwarm({
      processes: values.processes,
      argv: childArgv(argv, parseArgsOptions(spec)),
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
    const port = values["metrics-port"] + (swarm?.index ?? 0);
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
