// `worker --processes N`: the flag, the argv each child gets, the restart rule,
// and the supervisor itself with real signals over stand-in workers
// (fixtures/swarm-fake-worker.mjs; the interop test runs real ones).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { signalChild, typescriptArgv } from "../../harness/child-processes.js";
import { UsageError } from "../../src/tools/cli/errors.js";
import { childArgv, exitCodeOf, PROCESSES_FLAG, SlotRestarts } from "../../src/tools/cli/swarm.js";
import { DUPLICATE_STOP_MS, StopSignals } from "../../src/tools/cli/swarm-child.js";

describe("--processes", () => {
  it("defaults to 1 and takes a positive integer", () => {
    expect(PROCESSES_FLAG.default).toBe(1);
    expect(PROCESSES_FLAG.parse("1", "--processes")).toBe(1);
    expect(PROCESSES_FLAG.parse("8", "--processes")).toBe(8);
  });
  it.each(["0", "-1", "1.5", "two", "", " 2", "2x"])("%j is a one-line error naming the flag", (v) => {
    expect(() => PROCESSES_FLAG.parse(v, "--processes")).toThrow(UsageError);
    expect(() => PROCESSES_FLAG.parse(v, "--processes")).toThrow(`--processes must be an integer >= 1, got "${v}"`);
  });
});

describe("the children's argv", () => {
  const options = {
    processes: { type: "string" },
    queue: { type: "string", short: "q", multiple: true },
    "no-cron": { type: "boolean" },
  } as const;
  it("is the worker's argv without --processes, in either spelling", () => {
    expect(childArgv(["-q", "a", "--processes", "4", "--no-cron"], options)).toEqual(["-q", "a", "--no-cron"]);
    expect(childArgv(["--processes=4", "-q", "--processes"], options)).toEqual(["-q", "--processes"]);
  });
});

describe("the restart rule", () => {
  const rules = { firstDelayMs: 1000, maxDelayMs: 30_000, healthyAfterMs: 60_000, maxCrashes: 5 };
  it("backs off 1, 2, 4, 8 s and gives up at the fifth crash in a row within 60 s of each start", () => {
    const slot = new SlotRestarts(rules);
    const delays = [1, 2, 3, 4].map(() => slot.onExit(true, 5_000));
    expect(delays).toEqual([1000, 2000, 4000, 8000].map((delayMs) => ({ restart: true, delayMs })));
    expect(slot.onExit(true, 5_000)).toEqual({ restart: false });
  });
  it("caps the delay, and a child that ran 60 s starts the count again", () => {
    const slot = new SlotRestarts({ ...rules, maxCrashes: 100 });
    for (let i = 0; i < 10; i++) slot.onExit(true, 0);
    expect(slot.onExit(true, 0)).toEqual({ restart: true, delayMs: 30_000 });
    expect(slot.onExit(true, 60_000)).toEqual({ restart: true, delayMs: 1000 });
  });
  it("a clean exit (Stop from the Web UI) is replaced after the first delay and not counted", () => {
    const slot = new SlotRestarts({ ...rules, maxCrashes: 2 });
    expect(slot.onExit(true, 0)).toEqual({ restart: true, delayMs: 1000 });
    expect(slot.onExit(false, 0)).toEqual({ restart: true, delayMs: 1000 });
    expect(slot.onExit(true, 0)).toEqual({ restart: false });
  });
  it("a child killed by a signal counts as 128 + its number", () => {
    expect(exitCodeOf(3, null)).toBe(3);
    expect(exitCodeOf(null, "SIGKILL")).toBe(137);
    expect(exitCodeOf(null, "SIGTERM")).toBe(143);
  });
  it("the code a child reported before exiting wins over a signal the runtime reports (Deno after ChildProcess#kill)", () => {
    expect(exitCodeOf(null, "SIGTERM", 0)).toBe(0);
    expect(exitCodeOf(null, "SIGTERM", 3)).toBe(3);
    expect(exitCodeOf(0, null, 143)).toBe(143);
  });
});

describe("a child's stop signals", () => {
  it("a second TERM within a second of the first is the same stop (systemd signals every process, the supervisor too)", () => {
    const stops = new StopSignals();
    expect(stops.duplicate(143, 0)).toBe(false); // no stop yet
    stops.signalled(1000);
    stops.signalled(1200); // the second one does not move the first
    expect(stops.duplicate(143, 1000 + DUPLICATE_STOP_MS - 1)).toBe(true);
    expect(stops.duplicate(130, 1500)).toBe(true);
    expect(stops.duplicate(143, 1000 + DUPLICATE_STOP_MS)).toBe(false); // a later one cuts the stop short
    expect(stops.duplicate(0, 1500)).toBe(false); // the stop's own exit always goes through
    expect(stops.duplicate(3, 1500)).toBe(false);
  });
});

/** Starts a swarm-child fixture with an IPC channel; resolves with its exit code and everything it printed. */
async function runChild(fixture: string, onMessage: (child: ChildProcess, m: { type?: string }) => void) {
  const script = fileURLToPath(new URL(`fixtures/${fixture}`, import.meta.url));
  // spawn with an "ipc" stdio is fork, with the runtime's TypeScript command (Deno's fork takes no --sloppy-imports).
  const child = spawn(process.execPath, [...typescriptArgv(), script], { stdio: ["ignore", "pipe", "pipe", "ipc"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  child.on("message", (m: { type?: string }) => onMessage(child, m));
  try {
    return { code: await exited, out };
  } finally {
    child.kill("SIGKILL");
  }
}

describe("a child whose supervisor died while it started", () => {
  it("stops as on TERM when it joins, instead of crashing on the closed channel", async () => {
    // Close the channel once the child runs; it joins only after it saw the close.
    const { code, out } = await runChild("swarm-late-join.ts", (child) => child.disconnect());
    expect(code, out).toBe(0);
    expect(out).toBe("warn The supervisor is gone: stopping, as on TERM\nTERM\n");
  }, 30_000);
});

describe("a child whose supervisor goes while it stops", () => {
  it("takes the disconnect right after TERM for no second TERM, ends the stop and exits 0 (Deno closes the channel on a signal)", async () => {
    const { code, out } = await runChild("swarm-stop-disconnect.ts", (child, m) => {
      if (m.type === "sidekiq-bridge:ready") signalChild(child, "SIGTERM");
      if (m.type === "stopping") child.disconnect();
    });
    expect(code, out).toBe(0);
    expect(out).toBe("stop\nstopped\nexit 0\n");
  }, 30_000);
});

// Signals go to the supervisor's pid (signalChild): the exit code each test reads is
// then the supervisor's own on Deno too, where ChildProcess#kill reports any exit as the kill.
describe("the supervisor, with stand-in workers", () => {
  const SUPERVISOR = fileURLToPath(new URL("fixtures/swarm-supervisor.ts", import.meta.url));
  let dir: string;
  let sup: ChildProcess | undefined;
  afterEach(() => {
    sup?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  function supervise(processes: number, mode: string) {
    dir = mkdtempSync(join(tmpdir(), "swarm-"));
    const log = join(dir, "log");
    sup = spawn(process.execPath, [...typescriptArgv(), SUPERVISOR, String(processes), log, mode], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    sup.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => sup!.on("exit", (code) => r(code)));
    const lines = () => {
      try {
        return readFileSync(log, "utf8").trim().split("\n");
      } catch {
        return [];
      }
    };
    const until = async (what: string, ok: (l: string[]) => boolean) => {
      const deadline = Date.now() + 20_000;
      while (!ok(lines())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${lines().join("\n")}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const count = (l: string[], re: RegExp) => l.filter((x) => re.test(x)).length;
    const ready = (n: number) => until(`${n} ready`, (l) => count(l, / ready /) === n);
    return { exited, lines, until, count, ready, stderr: () => stderr };
  }

  it("forwards TSTP and TERM to every child and exits with the highest code once all have exited", async () => {
    const s = supervise(2, "ok");
    await s.ready(2);
    signalChild(sup!, "SIGTSTP");
    await s.until("2 TSTP", (l) => s.count(l, / TSTP$/) === 2);
    signalChild(sup!, "SIGTERM");
    expect(await s.exited).toBe(3); // slot 1 exits 3, slot 0 exits 0
    expect(s.count(s.lines(), / TERM$/)).toBe(2);
  }, 30_000);

  it("takes the exit code a child sent over IPC over the SIGTERM its exit is reported with", async () => {
    const s = supervise(2, "reported-as-killed");
    await s.ready(2);
    signalChild(sup!, "SIGTERM");
    expect(await s.exited).toBe(3); // slot 1 reported 3, slot 0 reported 0: not 143
    expect(s.count(s.lines(), / TERM$/)).toBe(2);
  }, 30_000);

  it("a second INT is forwarded too: the children exit at once (130)", async () => {
    const s = supervise(2, "ok");
    await s.ready(2);
    signalChild(sup!, "SIGINT");
    await s.until("2 INT", (l) => s.count(l, / INT$/) === 2);
    signalChild(sup!, "SIGINT");
    expect(await s.exited).toBe(130);
  }, 30_000);

  it("replaces a child killed with -9, telling the new one whom it replaces", async () => {
    const s = supervise(2, "ok");
    await s.ready(2);
    const [, pid] = s
      .lines()
      .find((l) => l.startsWith("0 "))!
      .split(" ");
    process.kill(Number(pid), "SIGKILL");
    await s.until("a replacement in slot 0", (l) => l.some((x) => x.startsWith("0 ") && x.endsWith(` fake:${pid}`)));
    signalChild(sup!, "SIGTERM");
    // The killed child's 137 does not count: the stop's exits (0 and 3) do.
    expect(await s.exited).toBe(3);
    expect(s.count(s.lines(), / TERM$/)).toBe(2);
  }, 30_000);

  it("a child that cannot start stops the swarm with exit code 1, no restart", async () => {
    const s = supervise(2, "fail-start");
    expect(await s.exited).toBe(1);
    expect(s.stderr()).toContain("could not start (exit code 1)");
    expect(s.stderr()).not.toContain("starting a new one");
  }, 30_000);

  it("a crash loop (3 crashes in a row with these rules) stops the swarm with exit code 1", async () => {
    const s = supervise(1, "crash");
    expect(await s.exited).toBe(1);
    expect(s.count(s.lines(), / ready /)).toBe(3);
    expect(s.stderr()).toContain("crashed 3 times in a row");
  }, 30_000);
});
