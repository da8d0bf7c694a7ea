// The line protocol between the harness and the processes it measures: the
// harness writes one JSON command per line on a child's stdin; a child answers
// with lines `__BENCH__ {json}` on stdout (anything else on stdout is a log).
// Node children (bridge, BullMQ) and Ruby (lib/bench_jobs.rb) speak the same.
import { nowMs } from "../../src/core/wire/timestamps.js";
import { GcPauses, type GcTail } from "./gc-pauses.js";

export const MARK = "__BENCH__ ";

/** Harness -> child. */
export type Command =
  /** Enqueue `n` jobs in bulk (the system's own bulk API), `batch` per round trip. */
  | { op: "bulk"; n: number; batch: number }
  /** Enqueue `n` jobs one by one with `inflight` pushes outstanding at any time. */
  | { op: "single"; n: number; inflight: number }
  /** Enqueue `n` jobs at `rate` jobs/s; each job carries its enqueue time (epoch ms) as its argument. */
  | { op: "paced"; n: number; rate: number }
  /** Worker: count the next `n` jobs from zero, report when the n-th has run; `latency` reads the enqueue time from the argument. */
  | { op: "expect"; n: number; latency: boolean }
  | { op: "exit" };

/** Child -> harness. */
export type Message =
  | { type: "ready"; pid: number; runtime: string }
  /** An enqueue command finished: `ms` timed inside the child around the system's calls only. */
  | { type: "result"; ms: number; n: number; cpuUs: number; lateMs?: number }
  /** A worker took `expect`: its CPU time now. */
  | { type: "armed"; cpuUs: number }
  /**
   * The n-th job ran at `t` (epoch ms); `latencies` are start - enqueue in ms
   * (latency mode), and `gc` the worker's own GC pauses meanwhile (Node children).
   */
  | { type: "done"; t: number; count: number; cpuUs: number; latencies?: number[]; gc?: GcTail }
  | { type: "error"; message: string };

/** Wall clock in epoch milliseconds with sub-millisecond resolution, comparable across processes. */
export { nowMs };

/** CPU time (user + system, all threads) of this process, in microseconds. */
export function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Child side: send a message to the harness. */
export function emit(msg: Message): void {
  process.stdout.write(`${MARK}${JSON.stringify(msg)}\n`);
}

/** Child side: the harness's commands, one per stdin line, until stdin closes. */
export async function* commands(): AsyncGenerator<Command> {
  let buf = "";
  for await (const chunk of process.stdin) {
    buf += String(chunk);
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line) as Command;
    }
  }
}

/** Child side: a worker's job counter (the no-op job's only work). */
export class JobCounter {
  private expect = 0;
  private count = 0;
  private latency = false;
  // Sized once per run, so that keeping the samples allocates nothing a job.
  private samples = new Float64Array(0);
  private starts = new Float64Array(0);
  private recorded = 0;
  private readonly gc = new GcPauses();

  arm(n: number, latency: boolean): void {
    this.expect = n;
    this.count = 0;
    this.recorded = 0;
    this.latency = latency;
    this.samples = new Float64Array(latency ? n : 0);
    this.starts = new Float64Array(latency ? n : 0);
    if (latency) this.gc.start();
    emit({ type: "armed", cpuUs: cpuUs() });
  }

  /** One job started; `enqueuedAt` is its argument in latency mode (epoch ms). */
  tick(enqueuedAt: unknown): void {
    const t = nowMs();
    const i = this.recorded;
    if (this.latency && typeof enqueuedAt === "number" && i < this.samples.length) {
      this.samples[i] = t - enqueuedAt;
      this.starts[i] = t;
      this.recorded++;
    }
    if (++this.count === this.expect) {
      const cpu = cpuUs();
      const n = this.recorded;
      emit({
        type: "done",
        t,
        count: this.count,
        cpuUs: cpu,
        ...(this.latency
          ? { latencies: Array.from(this.samples.subarray(0, n)), gc: this.gc.stop(this.samples, this.starts, n) }
          : {}),
      });
    }
  }
}

/** Child side: runs `fn(i)` for i in [0, n) with at most `inflight` calls outstanding. */
export async function withInflight(n: number, inflight: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inflight, n) }, lane));
}

/** Child side: calls `fn(enqueuedAtMs)` n times at `rate` per second; returns how late the last call was (ms). */
export async function paced(n: number, rate: number, fn: (t: number) => Promise<unknown>): Promise<number> {
  const start = nowMs();
  const interval = 1000 / rate;
  let late = 0;
  for (let i = 0; i < n; i++) {
    const due = start + i * interval;
    const wait = due - nowMs();
    if (wait >= 1) await new Promise((r) => setTimeout(r, wait));
    const t = nowMs();
    late = t - due;
    await fn(t);
  }
  return late;
}

/** Child side: how one system enqueues, for serveClient. */
export interface Enqueuer {
  /** Builds `n` jobs (not timed) and returns the timed part: sending them through the bulk API, `batch` per round trip. */
  bulk(n: number, batch: number): () => Promise<unknown>;
  /** Enqueues one job whose argument is `arg`: its index (single) or its push time in epoch ms (paced). */
  one(arg: number, paced: boolean): Promise<unknown>;
}

/** Child side, role "client": announces itself, then times each enqueue command until "exit". */
export async function serveClient(e: Enqueuer): Promise<void> {
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    const c0 = cpuUs();
    if (cmd.op === "bulk") {
      const send = e.bulk(cmd.n, cmd.batch);
      const t0 = nowMs();
      await send();
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "single") {
      const t0 = nowMs();
      await withInflight(cmd.n, cmd.inflight, (i) => e.one(i, false));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0 });
    } else if (cmd.op === "paced") {
      const t0 = nowMs();
      const lateMs = await paced(cmd.n, cmd.rate, (t) => e.one(t, true));
      emit({ type: "result", ms: nowMs() - t0, n: cmd.n, cpuUs: cpuUs() - c0, lateMs });
    }
  }
}

/** Child side, role "worker" (already running, counting into `counter`): announces itself, then arms the counter on each "expect" until "exit". */
export async function serveWorker(counter: JobCounter): Promise<void> {
  emit({ type: "ready", pid: process.pid, runtime: `node ${process.version}` });
  for await (const cmd of commands()) {
    if (cmd.op === "exit") break;
    if (cmd.op === "expect") counter.arm(cmd.n, cmd.latency);
  }
}

/** Child side: runs the process's main, then exits 0; on an error, reports it to the harness and exits 1. */
export async function runChild(main: () => Promise<void>): Promise<never> {
  try {
    await main();
    process.exit(0);
  } catch (e) {
    emit({ type: "error", message: (e as Error).stack ?? String(e) });
    process.exit(1);
  }
}
