// Whose work a worker's jobs wait behind on its one CPU. Runs the latency
// bench (or any command given after --) with the kernel's scheduler events
// traced on the bench's test CPU, then lists, for each worker that ran there,
// how often and how long the threads that start its jobs (Node's main thread;
// Ruby's processor threads) waited for the CPU, and what ran meanwhile: its
// own process's other threads (V8's GC and compiler helpers, for Node), other
// processes, kernel threads, or nothing yet (a woken thread the idle CPU had
// not started). Needs root (ftrace); restores the trace settings it changed.
//
//   npx tsx bench/sched-waits.ts                       BENCH_SCENARIOS=latency npm run bench
//   npx tsx bench/sched-waits.ts -- npm run bench      any command (its env passes through)
//   SCHED_MIN_MS=2 ...                                 waits counted from this length (ms)
//   SCHED_TRACE=file ...                               reads a trace an earlier run kept, runs nothing
import { spawn, spawnSync } from "node:child_process";
import { createReadStream, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { AUX_CPU, canPin, pinPid, TEST_CPU } from "./lib/cpu.js";
import { CpuTrace, type Wait } from "./sched/waits.js";

const TRACING = "/sys/kernel/tracing";
const MIN_MS = Number(process.env.SCHED_MIN_MS ?? 2);
// The irq and softirq entries say who is running when a switch out of idle goes untraced.
const EVENTS: Record<string, string> = {
  "sched/sched_switch": `CPU == ${TEST_CPU}`,
  "sched/sched_wakeup": `target_cpu == ${TEST_CPU}`,
  "irq/irq_handler_entry": `CPU == ${TEST_CPU}`,
  "irq/softirq_entry": `CPU == ${TEST_CPU}`,
};

const sep = process.argv.indexOf("--");
const command = sep >= 0 ? process.argv.slice(sep + 1) : ["npm", "run", "bench"];
const env = sep >= 0 ? process.env : { BENCH_SCENARIOS: "latency", ...process.env };

/** Traces the test CPU while the command runs; returns the trace's file and the command's exit status. */
async function traceWhile(): Promise<{ out: string; status: number | null }> {
  if (process.getuid?.() !== 0) throw new Error("sched-waits needs root: ftrace is root's");
  if (!canPin()) throw new Error("sched-waits needs taskset and 2 CPUs: it traces the bench's test CPU");
  if (!existsSync(join(TRACING, "trace_pipe"))) {
    const r = spawnSync("mount", ["-t", "tracefs", "nodev", TRACING], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`tracefs is not mounted and could not be: ${r.stderr.trim()}`);
  }
  pinPid(process.pid, AUX_CPU); // this process and its reader stay off the traced CPU
  const knob = (path: string, value: string) => writeFileSync(join(TRACING, path), value);
  const read = (path: string) => readFileSync(join(TRACING, path), "utf8").trim();

  // A buffer not yet used reads "7 (expanded: 1408)": the size it takes once tracing starts is the one to put back.
  const size = /^(\d+)(?: \(expanded: (\d+)\))?/.exec(read("buffer_size_kb"));
  const before = { buffer: size?.[2] ?? size?.[1] ?? "1408", tgid: read("options/record-tgid") };
  const out = join(mkdtempSync(join(tmpdir(), "sched-waits-")), "trace.txt");
  knob("tracing_on", "0");
  knob("trace", "");
  knob("options/record-tgid", "1");
  knob("buffer_size_kb", "65536");
  for (const [event, filter] of Object.entries(EVENTS)) {
    knob(`events/${event}/filter`, filter);
    knob(`events/${event}/enable`, "1");
  }
  // The reader sits with the harness on the auxiliary CPU, off the traced one.
  const reader = spawn("taskset", ["-c", String(AUX_CPU), "cat", join(TRACING, "trace_pipe")], {
    stdio: ["ignore", openSync(out, "w"), "inherit"],
  });
  try {
    knob("tracing_on", "1");
    return { out, status: spawnSync(command[0]!, command.slice(1), { stdio: "inherit", env }).status };
  } finally {
    knob("tracing_on", "0");
    await new Promise((r) => setTimeout(r, 500)); // let the reader drain the buffer
    reader.kill();
    // A lost sched_switch leaves a thread "running" until its next event: the attribution would be wrong.
    const lost = ["overrun", "dropped events"].map((k) =>
      [0, TEST_CPU].reduce(
        (n, cpu) => n + Number(new RegExp(`^${k}: (\\d+)`, "m").exec(read(`per_cpu/cpu${cpu}/stats`))?.[1] ?? 0),
        0,
      ),
    );
    if (lost.some((n) => n > 0))
      console.error(
        `sched-waits: the trace lost ${lost[0]} events (overrun) and dropped ${lost[1]}: the figures below are not reliable`,
      );
    for (const event of Object.keys(EVENTS)) {
      knob(`events/${event}/enable`, "0");
      knob(`events/${event}/filter`, "0");
    }
    knob("options/record-tgid", before.tgid);
    knob("buffer_size_kb", before.buffer);
  }
}

const { out, status } = process.env.SCHED_TRACE ? { out: process.env.SCHED_TRACE, status: 0 } : await traceWhile();
const trace = new CpuTrace(TEST_CPU);
for await (const line of createInterface({ input: createReadStream(out) })) trace.add(line);

/** Overlapping waits merged, in time order. */
function union(waits: Wait[]): Wait[] {
  const out: Wait[] = [];
  for (const w of [...waits].sort((a, b) => a.from - b.from)) {
    const last = out.at(-1);
    if (last && w.from <= last.to) last.to = Math.max(last.to, w.to);
    else out.push({ ...w });
  }
  return out;
}

/** The threads that start a worker's jobs, or none when the process is not a worker. */
function jobThreads(pid: number): number[] {
  const threads = trace.threadsOf(pid);
  const ruby = threads.filter((t) => /^(sidekiq\.default|processor)/.test(trace.nameOf(t)));
  if (ruby.length) return ruby;
  return trace.nameOf(pid) === "node" ? [pid] : [];
}

const ms = (n: number) => n.toFixed(1);
console.log(
  `\nWaits for CPU ${TEST_CPU} of the threads that start jobs (${process.env.SCHED_TRACE ? "" : `${command.join(" ")}, exit ${status}; `}trace: ${out}):`,
);
const workers = [...trace.processes()].filter(([pid, running]) => running > 1000 && jobThreads(pid).length);
for (const [pid] of workers.sort((a, b) => a[0] - b[0])) {
  const mine = new Set(jobThreads(pid));
  const waits = trace.waits.filter((w) => mine.has(w.tid));
  const long = waits.filter((w) => w.to - w.from > MIN_MS);
  // Ruby's threads often wait together behind the same holder: count each moment once.
  const spans = union(long);
  const held = new Map<string, number>();
  for (const w of spans) for (const [who, t] of trace.holders(w)) held.set(who, (held.get(who) ?? 0) + t);
  const total = spans.reduce((s, w) => s + w.to - w.from, 0);
  const longest = Math.max(0, ...waits.map((w) => w.to - w.from));
  console.log(
    `\n${trace.nameOf(pid)} pid ${pid} (${mine.size} thread${mine.size > 1 ? "s" : ""}): ${waits.length} waits, ` +
      `${long.length} over ${MIN_MS} ms (${long.filter((w) => w.to - w.from > 4).length} over 4 ms, longest ${ms(longest)} ms), ` +
      `${ms(total)} ms with one or more waiting; ${long.filter((w) => w.why === "preempted").length} of them preempted. The CPU meanwhile ran:`,
  );
  for (const [who, t] of [...held].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`  ${ms(t).padStart(7)} ms  ${(((t / total) * 100) | 0).toString().padStart(3)}%  ${who}`);
}
process.exitCode = status ?? 1;
