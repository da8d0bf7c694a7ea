// The worker's logger. Internally every line is `(msg, ctx)`; the default
// writes Sidekiq's formats (Pretty text or JSON) to stderr, and a pino-style
// `(obj, msg)` logger is accepted as it is, with every context field kept.
import { jsonMember, jsonString, toJson } from "./log-json.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type LogContext = Record<string, unknown>;

/** Where the worker logs: `(msg, ctx)` at debug, info, warn and error. */
export interface Logger {
  debug(msg: string, ctx?: LogContext): void;
  info(msg: string, ctx?: LogContext): void;
  warn(msg: string, ctx?: LogContext): void;
  error(msg: string, ctx?: LogContext): void;
}

/** pino, bunyan and the like: the context object first, the message second. */
export interface ObjectFirstLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export function isLogLevel(v: unknown): v is LogLevel {
  return typeof v === "string" && (LOG_LEVELS as readonly string[]).includes(v);
}

export type LogFormat = "text" | "json";

export interface ConsoleLoggerOptions {
  level?: LogLevel;
  /** "text": Sidekiq's Pretty lines; "json": Sidekiq's JSON formatter (one object a line). */
  format?: LogFormat;
  /** Where lines go (default process.stderr). */
  stream?: { write(chunk: string): unknown };
  /** ANSI colours on the level (default: when the stream is a TTY). */
  color?: boolean;
}

const SEVERITY: Record<LogLevel, string> = { debug: "DEBUG", info: "INFO", warn: "WARN", error: "ERROR" };
const COLORED: Record<LogLevel, string> = {
  debug: "\x1b[1;32mDEBUG\x1b[0m",
  info: "\x1b[1;34mINFO \x1b[0m",
  warn: "\x1b[1;33mWARN \x1b[0m",
  error: "\x1b[1;31mERROR\x1b[0m",
};

/** The process's own tid, for lines outside a job (Sidekiq prints the thread's). */
export const MAIN_TID = (process.pid ^ 0x5f3759df).toString(36);

// Two lines a job: the ISO time is formatted once per millisecond, not per line.
let isoAt = 0;
let isoText = "";
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoAt) {
    isoAt = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** Sidekiq's `format_context`: ` k=v k2=a,b`, arrays joined by commas. */
export function formatContext(ctx: LogContext): string {
  let out = "";
  for (const k in ctx) {
    const v = ctx[k];
    if (v === undefined) continue;
    // Ruby prints a whole Float with its ".0" (elapsed=0.0).
    const s =
      k === "elapsed" && Number.isInteger(v)
        ? `${v as number}.0`
        : Array.isArray(v)
          ? v.map((x) => (typeof x === "object" && x !== null ? toJson(x) : String(x))).join(",")
          : typeof v === "object" && v !== null
            ? toJson(v)
            : String(v);
    out += ` ${k}=${s}`;
  }
  return out;
}

/** One line in Sidekiq's Pretty (or Plain, without colour) format. */
export function formatText(
  level: LogLevel,
  msg: string,
  ctx: LogContext | undefined,
  color = false,
  now?: Date,
): string {
  const { tid, ...rest } = ctx ?? {};
  const sev = color ? COLORED[level] : SEVERITY[level];
  const ts = now ? now.toISOString() : isoNow();
  return `${sev} ${ts} pid=${process.pid} tid=${typeof tid === "string" ? tid : MAIN_TID}${formatContext(rest)}: ${msg}\n`;
}

/** One line as Sidekiq's JSON formatter writes it: ts, pid, tid, lvl, msg, ctx. */
export function formatJson(level: LogLevel, msg: string, ctx: LogContext | undefined, now?: Date): string {
  let tid: unknown;
  // ctx without tid, written member by member (no copy, no generic stringify).
  let rest: string | undefined;
  for (const k in ctx) {
    if (k === "tid") {
      tid = ctx[k];
      continue;
    }
    // Copied into an object, a "__proto__" member was never its own key.
    const m = k === "__proto__" ? "" : jsonMember(k, ctx[k]);
    rest = rest === undefined ? m : m === "" || rest === "" ? rest + m : `${rest},${m}`;
  }
  const ts = now ? now.toISOString() : isoNow();
  const m = typeof msg === "string" ? jsonString(msg) : toJson(msg);
  const head = `{"ts":"${ts}","pid":${process.pid},"tid":${jsonString(typeof tid === "string" ? tid : MAIN_TID)},"lvl":"${SEVERITY[level]}","msg":${m}`;
  return rest === undefined ? `${head}}\n` : `${head},"ctx":{${rest}}}\n`;
}

/**
 * A job's `start`, `done` or `fail` line in JSON, of the fixed shape the job
 * logger gives it (ctx: class, jid, and elapsed when given): formatJson's
 * bytes for `{ tid, class, jid, elapsed }`, without the context object.
 */
export function formatJobJson(
  msg: string,
  tid: string,
  className: string,
  jid: string,
  elapsed?: number,
  now?: Date,
): string {
  const ts = now ? now.toISOString() : isoNow();
  const e = elapsed === undefined ? "" : `,"elapsed":${Number.isFinite(elapsed) ? String(elapsed) : "null"}`;
  return `{"ts":"${ts}","pid":${process.pid},"tid":${jsonString(tid)},"lvl":"INFO","msg":${jsonString(msg)},"ctx":{"class":${jsonString(className)},"jid":${jsonString(jid)}${e}}}\n`;
}

/** The same job line in Sidekiq's Pretty text: formatText's bytes for `{ tid, class, jid, elapsed }`. */
export function formatJobText(
  msg: string,
  tid: string,
  className: string,
  jid: string,
  elapsed?: number,
  color = false,
  now?: Date,
): string {
  const ts = now ? now.toISOString() : isoNow();
  const e = elapsed === undefined ? "" : Number.isInteger(elapsed) ? ` elapsed=${elapsed}.0` : ` elapsed=${elapsed}`;
  return `${color ? COLORED.info : SEVERITY.info} ${ts} pid=${process.pid} tid=${tid} class=${className} jid=${jid}${e}: ${msg}\n`;
}

/** Writes a job line at info from its parts (see formatJobJson). */
export type JobLineWriter = (msg: string, tid: string, className: string, jid: string, elapsed?: number) => void;

const jobLineWriters = new WeakMap<Logger, JobLineWriter>();

/** How `l` writes job lines without a context object, when it can (the console logger at info). */
export function jobLineWriter(l: Logger): JobLineWriter | undefined {
  return jobLineWriters.get(l);
}

/**
 * Lines are gathered and written once per turn of the event loop: a drain
 * logs two lines a job, and one write per line would cost more than the job.
 * What is pending is written synchronously at exit.
 */
const buffers = new Set<LineBuffer>();
let exitHooked = false;

class LineBuffer {
  private pending: string[] = [];
  private scheduled = false;
  constructor(private readonly stream: { write(chunk: string): unknown }) {
    buffers.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.once("exit", () => {
        for (const b of buffers) b.flush();
      });
    }
  }
  push(line: string): void {
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }
  flush(): void {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    const chunk = this.pending.join("");
    this.pending = [];
    try {
      this.stream.write(chunk);
    } catch {
      // A closed stderr must not stop the worker.
    }
  }
}

/** The default logger: Sidekiq's text (Pretty) or JSON lines on stderr, at or above a level. */
export function consoleLogger(levelOrOptions: LogLevel | ConsoleLoggerOptions = "info"): Logger {
  const o = typeof levelOrOptions === "string" ? { level: levelOrOptions } : levelOrOptions;
  const min = LOG_LEVELS.indexOf(o.level ?? "info");
  const stream = o.stream ?? process.stderr;
  const color = o.color ?? (stream === process.stderr && process.stderr.isTTY === true);
  const out = new LineBuffer(stream);
  const format = o.format ?? "text";
  const line = (lvl: LogLevel) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return () => {};
    return (msg: string, ctx?: LogContext) =>
      out.push(format === "json" ? formatJson(lvl, msg, ctx) : formatText(lvl, msg, ctx, color));
  };
  const logger = { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
  if (LOG_LEVELS.indexOf("info") >= min)
    jobLineWriters.set(
      logger,
      format === "json"
        ? (msg, tid, className, jid, elapsed) => out.push(formatJobJson(msg, tid, className, jid, elapsed))
        : (msg, tid, className, jid, elapsed) => out.push(formatJobText(msg, tid, className, jid, elapsed, color)),
    );
  return logger;
}

/** Wraps a pino-style logger: `info(msg, ctx)` becomes `info(ctx, msg)`, every field kept. */
export function objectFirstLogger(l: ObjectFirstLogger): Logger {
  return {
    debug: (msg, ctx) => l.debug({ ...ctx }, msg),
    info: (msg, ctx) => l.info({ ...ctx }, msg),
    warn: (msg, ctx) => l.warn({ ...ctx }, msg),
    error: (msg, ctx) => l.error({ ...ctx }, msg),
  };
}

/** pino (and pino-compatible loggers) expose `bindings()` and `child()`; bunyan exposes `fields`. */
function looksObjectFirst(l: object): boolean {
  const x = l as { bindings?: unknown; child?: unknown; fields?: unknown };
  return typeof x.child === "function" && (typeof x.bindings === "function" || typeof x.fields === "object");
}

export type LoggerLike = Logger | ObjectFirstLogger;

/**
 * The worker's logger from what the user gave: pino-style loggers are
 * recognised and called `(obj, msg)`; others are called `(msg, ctx)`.
 */
export function toLogger(l: LoggerLike): Logger {
  return looksObjectFirst(l) ? objectFirstLogger(l as ObjectFirstLogger) : (l as Logger);
}

/**
 * A logger that never throws: a failing user logger must not fail a job or
 * stop a loop. Its first error is reported once on stderr.
 */
export function safeLogger(l: Logger): Logger {
  let reported = false;
  const guard =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn.apply(l, args);
      } catch (e) {
        if (reported) return;
        reported = true;
        try {
          process.stderr.write(`sidekiq-bridge: the logger threw (${(e as Error)?.message}); its errors are ignored\n`);
        } catch {
          // nothing left to report to
        }
      }
    };
  const safe = { debug: guard(l.debug), info: guard(l.info), warn: guard(l.warn), error: guard(l.error) };
  // A console logger handed in (as the CLI does) keeps writing job lines from their parts.
  const jobLine = jobLineWriters.get(l);
  if (jobLine) jobLineWriters.set(safe, guard(jobLine));
  return safe;
}

/** A logger that adds `bound` to every line's context (a job's tid, class, jid). */
export function withContext(l: Logger, bound: LogContext): Logger {
  const merge = (ctx?: LogContext) => (ctx ? { ...bound, ...ctx } : bound);
  return {
    debug: (m, c) => l.debug(m, merge(c)),
    info: (m, c) => l.info(m, merge(c)),
    warn: (m, c) => l.warn(m, merge(c)),
    error: (m, c) => l.error(m, merge(c)),
  };
}
