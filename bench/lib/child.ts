// Harness side of the line protocol: a measured process, pinned to a CPU,
// whose `__BENCH__` lines are messages and whose other output is kept as a log.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { MARK, type Command, type Message } from "./protocol.js";
import { pinnedArgv } from "./cpu.js";

type Waiter = {
  type: Message["type"];
  resolve: (m: Message) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
};

export interface SpawnOptions {
  /** CPU to pin the process to (ignored when taskset is missing). */
  cpu?: number;
  env?: Record<string, string>;
}

export class Child {
  /** Every process still running, for the harness's emergency stop. */
  static readonly live = new Set<Child>();
  readonly pid: number;
  private readonly proc: ChildProcess;
  private readonly inbox: Message[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly log: string[] = [];
  private exited = false;
  private readonly exit: Promise<void>;

  constructor(
    readonly name: string,
    argv: string[],
    opts: SpawnOptions = {},
  ) {
    const [cmd, ...args] = pinnedArgv(opts.cpu, argv);
    this.proc = spawn(cmd!, args, { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...opts.env } });
    this.pid = this.proc.pid!;
    Child.live.add(this);
    createInterface({ input: this.proc.stdout! }).on("line", (line) => this.onLine(line));
    createInterface({ input: this.proc.stderr! }).on("line", (line) => this.keep(line));
    this.proc.stdin!.on("error", () => undefined);
    this.exit = new Promise((resolve) =>
      this.proc.once("exit", (code, signal) => {
        this.exited = true;
        Child.live.delete(this);
        const err = new Error(
          `${this.name} (pid ${this.pid}) exited (${signal ?? code}) while the harness waited for it\n${this.tail()}`,
        );
        for (const w of this.waiters.splice(0)) {
          clearTimeout(w.timer);
          w.reject(err);
        }
        resolve();
      }),
    );
  }

  private keep(line: string): void {
    // BENCH_CHILD_LOG=dir keeps each process's whole log (e.g. V8's --trace-* output), each line after the
    // wall-clock time it arrived, in dir/<name>-<pid>.log.
    const dir = process.env.BENCH_CHILD_LOG;
    if (dir)
      appendFileSync(join(dir, `${this.name.replace(/[^\w.-]+/g, "_")}-${this.pid}.log`), `${Date.now()} ${line}\n`);
    this.log.push(line);
    if (this.log.length > 200) this.log.shift();
  }

  private onLine(line: string): void {
    const at = line.indexOf(MARK);
    if (at < 0) {
      this.keep(line);
      return;
    }
    const msg = JSON.parse(line.slice(at + MARK.length)) as Message;
    if (msg.type === "error") {
      this.keep(msg.message);
      const err = new Error(`${this.name}: ${msg.message}`);
      for (const w of this.waiters.splice(0)) {
        clearTimeout(w.timer);
        w.reject(err);
      }
      return;
    }
    const i = this.waiters.findIndex((w) => w.type === msg.type);
    if (i >= 0) {
      const [w] = this.waiters.splice(i, 1);
      clearTimeout(w!.timer);
      w!.resolve(msg);
    } else this.inbox.push(msg);
  }

  /** The last lines the process logged. */
  tail(n = 30): string {
    return this.log
      .slice(-n)
      .map((l) => `  | ${l}`)
      .join("\n");
  }

  send(cmd: Command): void {
    this.proc.stdin!.write(`${JSON.stringify(cmd)}\n`);
  }

  /** The next message of this type (one that already arrived, or the next to come). */
  next<T extends Message["type"]>(type: T, timeoutMs: number): Promise<Extract<Message, { type: T }>> {
    const i = this.inbox.findIndex((m) => m.type === type);
    if (i >= 0) return Promise.resolve(this.inbox.splice(i, 1)[0] as Extract<Message, { type: T }>);
    if (this.exited) return Promise.reject(new Error(`${this.name} has exited\n${this.tail()}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const k = this.waiters.findIndex((w) => w.timer === timer);
        if (k >= 0) this.waiters.splice(k, 1);
        reject(new Error(`${this.name}: no "${type}" within ${timeoutMs} ms\n${this.tail()}`));
      }, timeoutMs);
      this.waiters.push({ type, resolve: resolve as (m: Message) => void, reject, timer });
    });
  }

  /** Kills it at once (the harness is being interrupted). */
  kill(): void {
    if (!this.exited) this.proc.kill("SIGKILL");
  }

  /** Asks the process to exit, then TERM, then KILL; by its pid only. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.exited) return;
    try {
      this.send({ op: "exit" });
      this.proc.stdin!.end();
    } catch {
      // stdin already gone
    }
    const timeout = (ms: number) => new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms).unref());
    if ((await Promise.race([this.exit, timeout(graceMs)])) !== "timeout") return;
    this.proc.kill("SIGTERM");
    if ((await Promise.race([this.exit, timeout(5_000)])) !== "timeout") return;
    this.proc.kill("SIGKILL");
    await this.exit;
  }
}
