// A small logger interface; the default writes one line per event to stderr,
// like Sidekiq's `pid=… tid=… LEVEL: message` lines.
/** Where the worker logs: any object with debug, info, warn and error. */
export interface Logger {
  debug(msg: string, ctx?: Record<string, unknown>): void;
  info(msg: string, ctx?: Record<string, unknown>): void;
  warn(msg: string, ctx?: Record<string, unknown>): void;
  error(msg: string, ctx?: Record<string, unknown>): void;
}

/** The default logger: one line per event on stderr, like Sidekiq's, at or above `level`. */
export function consoleLogger(level: "debug" | "info" | "warn" | "error" = "info"): Logger {
  const order = ["debug", "info", "warn", "error"];
  const min = order.indexOf(level);
  const line = (lvl: string) => (msg: string, ctx?: Record<string, unknown>) => {
    if (order.indexOf(lvl) < min) return;
    const extra =
      ctx && Object.keys(ctx).length
        ? ` ${JSON.stringify(ctx, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}`
        : "";
    process.stderr.write(`${new Date().toISOString()} pid=${process.pid} ${lvl.toUpperCase()}: ${msg}${extra}\n`);
  };
  return { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
}
