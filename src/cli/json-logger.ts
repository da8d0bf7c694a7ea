// `sidekiq-bridge worker --json`: the worker's log as one JSON object per line
// on stderr ({"time","level","pid","msg",...context}), for log shippers. The
// same events as the text lines, nothing more.
import type { Logger } from "../server/logger.js";

export function jsonLogger(write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const line = (level: string) => (msg: string, ctx?: Record<string, unknown>) => {
    const record = { time: new Date().toISOString(), level, pid: process.pid, msg, ...ctx };
    write(`${JSON.stringify(record, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}\n`);
  };
  return { debug: line("debug"), info: line("info"), warn: line("warn"), error: line("error") };
}
