// Redis MONITOR over a plain socket: ioredis' monitor mode can throw
// "Command queue state error" from its data handler when lines race its own
// commands, so tests read the stream themselves.
import { connect } from "node:net";

export interface MonitorLine {
  db: string;
  source: string;
  args: string[];
}

/**
 * The quoted arguments of a MONITOR line. Redis escapes quotes inside an
 * argument (`"{\"jid\":1}"`); Valkey 8 prints them raw (`"{"jid":1}"`), so
 * arguments are split on the `" "` between them, then Redis' escapes undone.
 */
export function parseMonitorArgs(text: string): string[] {
  if (!text.startsWith('"') || !text.endsWith('"')) return [];
  return text
    .slice(1, -1)
    .split('" "')
    .map((a) =>
      a.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_s, e: string) =>
        e[0] === "x"
          ? String.fromCharCode(parseInt(e.slice(1), 16))
          : (({ n: "\n", r: "\r", t: "\t", a: "\x07", b: "\b" } as Record<string, string>)[e] ?? e),
      ),
    );
}

export async function startMonitor(port: number, onLine: (l: MonitorLine) => void): Promise<{ stop(): void }> {
  const sock = connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    sock.once("connect", () => resolve());
    sock.once("error", reject);
  });
  let buf = "";
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  sock.on("data", (d) => {
    buf += d.toString("latin1");
    let i: number;
    while ((i = buf.indexOf("\r\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (line === "+OK") ready();
      // +1795311516.347810 [3 127.0.0.1:46194] "zadd" "schedule" ...
      const m = /^\+\d+\.\d+ \[(\d+) ([^\]]+)\] (.*)$/.exec(line);
      if (m) onLine({ db: m[1]!, source: m[2]!, args: parseMonitorArgs(m[3]!) });
    }
  });
  sock.write("MONITOR\r\n");
  await started;
  return { stop: () => sock.destroy() };
}
