// Reads an ftrace text stream (sched_switch, sched_wakeup, irq and softirq
// events, with record-tgid) of one CPU and finds each time a thread waited for
// that CPU: from a wakeup, or from being preempted, until it ran again. For
// each wait it keeps what ran on the CPU meanwhile, so a report can say whose
// work a worker's job-starting thread waited behind.

const LINE = /^\s*(.+?)-(\d+)\s+\(\s*([-\d]+)\)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s+(.*)$/;
const WAKEUP = /comm=(.*) pid=(\d+) prio=\d+ target_cpu=(\d+)/;
const SWITCH = /prev_comm=(.*) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=(.*) next_pid=(\d+)/;

export interface Wait {
  tid: number;
  /** ms on the trace clock */
  from: number;
  to: number;
  /** woken and not yet run, or switched out while still runnable */
  why: "wakeup" | "preempted";
}

interface Run {
  tid: number;
  from: number;
  to: number;
}

export class CpuTrace {
  readonly waits: Wait[] = [];
  private readonly runs: Run[] = [];
  private readonly tgid = new Map<number, number>();
  private readonly comm = new Map<number, string>();
  private readonly runnable = new Map<number, { at: number; why: Wait["why"] }>();
  private current: { tid: number; since: number } | undefined;

  constructor(private readonly cpu: number) {}

  add(line: string): void {
    const m = LINE.exec(line);
    if (!m) return;
    const [, comm, tidText, tgidText, cpuText, tsText, event, rest] = m;
    const tid = Number(tidText);
    const at = Number(tsText) * 1000;
    if (tgidText !== "-------") this.tgid.set(tid, Number(tgidText));
    this.comm.set(tid, comm!);
    if (event === "sched_wakeup") {
      // Recorded on the waker's CPU; the trace's filter keeps those aimed at ours.
      const w = WAKEUP.exec(rest!);
      if (!w || Number(w[3]) !== this.cpu) return;
      const woken = Number(w[2]);
      this.comm.set(woken, w[1]!);
      if (!this.runnable.has(woken)) this.runnable.set(woken, { at, why: "wakeup" });
      return;
    }
    if (Number(cpuText) !== this.cpu) return;
    if (event !== "sched_switch") {
      // A switch out of idle is not always traced: whoever logs an event on the CPU is running it.
      if (this.current && tid !== this.current.tid) this.switchTo(tid, at);
      return;
    }
    const s = SWITCH.exec(rest!);
    if (!s) return;
    const prev = Number(s[2]);
    const next = Number(s[5]);
    this.comm.set(next, s[4]!);
    // A wakeup that came while the thread was still on the CPU is not a wait.
    this.runnable.delete(prev);
    if (prev !== 0 && s[3]!.startsWith("R")) this.runnable.set(prev, { at, why: "preempted" });
    const waited = this.runnable.get(next);
    if (waited && next !== 0) this.waits.push({ tid: next, from: waited.at, to: at, why: waited.why });
    this.runnable.delete(next);
    this.switchTo(next, at);
  }

  private switchTo(tid: number, at: number): void {
    if (this.current) this.runs.push({ tid: this.current.tid, from: this.current.since, to: at });
    this.current = { tid, since: at };
  }

  processOf(tid: number): number {
    return this.tgid.get(tid) ?? tid;
  }

  nameOf(tid: number): string {
    return tid === 0 ? "idle" : (this.comm.get(tid) ?? "?");
  }

  /** Threads of a process seen on the CPU. */
  threadsOf(pid: number): number[] {
    return [...this.comm.keys()].filter((t) => this.processOf(t) === pid);
  }

  /** Processes seen running on the CPU, with their running time in ms. */
  processes(): Map<number, number> {
    const out = new Map<number, number>();
    for (const r of this.runs) {
      if (r.tid === 0) continue;
      const p = this.processOf(r.tid);
      out.set(p, (out.get(p) ?? 0) + r.to - r.from);
    }
    return out;
  }

  /** What ran on the CPU during a wait, in ms per holder: the waiter's own process, another process, or idle. */
  holders(w: Wait): Map<string, number> {
    const own = this.processOf(w.tid);
    const out = new Map<string, number>();
    // runs end in time order: start from the first that ends after the wait began.
    let lo = 0;
    for (let hi = this.runs.length; lo < hi;) {
      const mid = (lo + hi) >>> 1;
      if (this.runs[mid]!.to <= w.from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.runs.length && this.runs[i]!.from < w.to; i++) {
      const r = this.runs[i]!;
      const ms = Math.min(r.to, w.to) - Math.max(r.from, w.from);
      const p = this.processOf(r.tid);
      const key =
        r.tid === 0
          ? "idle (the CPU not yet running the woken thread)"
          : p === own
            ? "its own process's other threads"
            : `${this.nameOf(r.tid)} (pid ${p})`;
      out.set(key, (out.get(key) ?? 0) + ms);
    }
    return out;
  }
}
