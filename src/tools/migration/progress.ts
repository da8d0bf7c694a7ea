// A percentage line on stderr for long work: rewritten in place on a
// terminal, one line every 10 % (or 5 s) otherwise, so logs stay short.
import type { Progress, ProgressFn } from "./stored-jobs.js";

export interface ProgressLine {
  update: ProgressFn;
  /** Ends the line (on a terminal) so the next output starts clean. */
  done(): void;
}

export function progressLine(stream: NodeJS.WriteStream = process.stderr, label = "sidekiq-bridge"): ProgressLine {
  const tty = !!stream.isTTY;
  let lastPct = -1;
  let lastAt = 0;
  let lastPhase = "";
  let drawn = false;
  const text = (p: Progress, pct: number) =>
    `${label}: ${p.phase}${p.key ? ` ${p.key}` : ""} ${p.done}/${p.total} (${pct}%)`;
  return {
    update(p) {
      const pct = p.total > 0 ? Math.min(100, Math.floor((p.done / p.total) * 100)) : 100;
      const now = Date.now();
      if (tty) {
        if (pct === lastPct && p.phase === lastPhase && now - lastAt < 200) return;
        stream.write(`\r\x1b[K${text(p, pct)}`);
        drawn = true;
      } else {
        const step = Math.floor(pct / 10);
        if (p.phase === lastPhase && step === Math.floor(lastPct / 10) && now - lastAt < 5000) return;
        stream.write(`${text(p, pct)}\n`);
      }
      lastPct = pct;
      lastAt = now;
      lastPhase = p.phase;
    },
    done() {
      if (tty && drawn) stream.write("\r\x1b[K");
      drawn = false;
    },
  };
}
