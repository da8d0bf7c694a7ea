// `sidekiq-bridge worker --processes 2` (the real binary) seen from real Ruby
// Sidekiq: two processes with distinct identities in Sidekiq::ProcessSet,
// every job Ruby enqueues processed (Sidekiq::Stats), a child killed with -9
// replaced with nothing lost (its in-flight jobs come back through recovery),
// and TERM stopping every child with a clean exit, an empty ProcessSet and
// nothing of theirs left in Redis. npm test runs it on Node and on Deno.
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { signalChild } from "../harness/child-processes.js";
import { type CliProcess, startCli } from "./support/cli-process.js";
import { describeEachSidekiq, type SidekiqContext, waitFor } from "./support/harness.js";

interface RubyProcess {
  identity: string;
  pid: number;
}

/** `worker --processes 2` on queue swarm, with the handlers of fixtures/swarm-handlers.mjs. */
function startSwarm(sk: SidekiqContext): CliProcess {
  const flags = ["--processes", "2", "-q", "swarm", "-c", "5", "-t", "3", "--dialect", sk.target.version];
  return startCli(["worker", ...flags, "-r", "interop-tests/fixtures/swarm-handlers.mjs"], { REDIS_URL: sk.url });
}

describeEachSidekiq("cli: worker --processes", (sk) => {
  const processes = () =>
    sk.ruby<RubyProcess[]>(`Sidekiq::ProcessSet.new.map { |p| {"identity" => p["identity"], "pid" => p["pid"]} }`);
  const twoProcesses = () =>
    waitFor("2 processes in ProcessSet", async () => {
      const ps = await processes();
      return ps.length === 2 ? ps : undefined;
    });
  const enqueue = (n: number, ms: number) =>
    sk.ruby<string[]>(
      `Sidekiq::Client.push_bulk("class" => "SwarmJob", "queue" => "swarm", "args" => Array.new(${n}) { [${ms}] })`,
    );
  const done = async () => (await sk.redis.lrange("bridge:swarm-done", 0, -1)).map((l) => l.split(" "));
  // The keys of stopped processes that should be gone. A stop leaves only the process
  // hash, expiring within 60 s, as Ruby's Launcher#clear_heartbeat does; not its work,
  // nor jobs in the bridge's working lists and hashes (which no Ruby API shows).
  const leftovers = async (ps: RubyProcess[]) => {
    const keys = [...new Set((await Promise.all(ps.map((p) => sk.redis.keys(`*${p.identity}*`)))).flat())];
    const ttls = await Promise.all(keys.map((k) => sk.redis.ttl(k)));
    return keys.filter((k, i) => !(ps.some((p) => p.identity === k) && ttls[i]! > 0 && ttls[i]! <= 60));
  };
  const killAll = async (child: ChildProcess) => {
    child.kill("SIGKILL");
    for (const p of await processes().catch(() => [])) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };

  it("2 processes in ProcessSet, Ruby's jobs all run, kill -9 replaced with nothing lost, TERM clean", async () => {
    const { child, exited, output } = startSwarm(sk);
    try {
      // Two processes, each its own identity and pid, neither the supervisor.
      const first = await twoProcesses();
      expect(new Set(first.map((p) => p.identity)).size).toBe(2);
      expect(new Set(first.map((p) => p.pid)).size).toBe(2);
      expect(first.map((p) => p.pid)).not.toContain(child.pid);

      // 300 jobs from Ruby: all processed, by both processes.
      const jids = await enqueue(300, 20);
      await waitFor(
        "Sidekiq::Stats to count 300 processed jobs",
        async () =>
          (
            await sk.ruby<number[]>(`s = Sidekiq::Stats.new; [s.processed, Sidekiq::Queue.new("swarm").size]`)
          ).join() === "300,0",
        40_000,
      );
      const ran = await done();
      expect(new Set(ran.map(([jid]) => jid))).toEqual(new Set(jids));
      expect(new Set(ran.map(([, pid]) => Number(pid)))).toEqual(new Set(first.map((p) => p.pid)));

      // kill -9 one child while it holds jobs: a new child takes its place
      // (ProcessSet is 2 again, without the dead one) and every job still runs.
      await sk.redis.del("bridge:swarm-done");
      const slow = await enqueue(40, 3000);
      await waitFor("both processes to hold jobs", async () => (await sk.redis.llen("queue:swarm")) <= 30);
      const victim = first[0]!;
      process.kill(victim.pid, "SIGKILL");
      const after = await waitFor(
        "a replacement in ProcessSet",
        async () => {
          const ps = await processes();
          return ps.length === 2 && !ps.some((p) => p.identity === victim.identity) ? ps : undefined;
        },
        30_000,
      );
      expect(after.map((p) => p.identity)).toContain(first[1]!.identity);
      await waitFor(
        "all 40 slow jobs to run",
        async () => new Set((await done()).map(([jid]) => jid)).size === 40,
        60_000,
      );
      expect(new Set((await done()).map(([jid]) => jid))).toEqual(new Set(slow));
      expect(output()).toMatch(
        new RegExp(`Recovered \\d+ jobs of dead process ${victim.identity} back to queue:swarm`),
      );
      expect(output()).toContain(`exited (code 137); starting a new one in 1 s`);

      // TERM: every child stops, the supervisor exits 0, nothing left registered.
      // Sent to its pid, so that the 0 read is its own exit code on Deno too (signalChild).
      signalChild(child, "SIGTERM");
      expect(await exited, output()).toBe(0);
      expect(await sk.ruby(`Sidekiq::ProcessSet.new.size`)).toBe(0);
      expect(await leftovers([...first, ...after])).toEqual([]);
      expect(output().match(/Bye!/g)).toHaveLength(2);
    } finally {
      await killAll(child);
    }
  }, 180_000);

  it("TERM to the supervisor and every child at once (systemd's default KillMode): one stop each, exit 0", async () => {
    await sk.redis.del("bridge:swarm-done");
    const { child, exited, output } = startSwarm(sk);
    try {
      const ps = await twoProcesses();
      const jids = await enqueue(20, 1500);
      await waitFor("jobs in flight", async () => (await sk.redis.llen("queue:swarm")) <= 10);
      // The children's TERM first, the supervisor's 100 ms later: two deliveries (the
      // kernel merges a signal that arrives while the same one is still pending).
      for (const p of ps) process.kill(p.pid, "SIGTERM");
      await new Promise((r) => setTimeout(r, 100));
      signalChild(child, "SIGTERM");
      // Not 143: the children took the two TERMs as one stop, and their jobs finished within -t 3.
      expect(await exited, output()).toBe(0);
      expect(output()).toContain("The same stop, signalled twice");
      expect(await sk.ruby(`Sidekiq::ProcessSet.new.size`)).toBe(0);
      expect(await leftovers(ps)).toEqual([]);
      const queued = await sk.ruby<string[]>(`Sidekiq::Queue.new("swarm").map(&:jid)`);
      expect(new Set([...(await done()).map(([jid]) => jid), ...queued])).toEqual(new Set(jids));
    } finally {
      await killAll(child);
    }
  }, 120_000);

  it("the supervisor killed with -9: its children stop by themselves, leaving nothing registered", async () => {
    const { child, exited } = startSwarm(sk);
    try {
      const ps = await twoProcesses();
      child.kill("SIGKILL");
      await exited;
      await waitFor("the children to leave ProcessSet", async () => (await processes()).length === 0, 30_000);
      // Gone, or a zombie waiting for whoever inherited it to reap it.
      const running = (pid: number) => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
        } catch {
          return false;
        }
      };
      await waitFor("the children to exit", async () => ps.every((p) => !running(p.pid)), 15_000);
    } finally {
      await killAll(child);
    }
  }, 60_000);
});

describe("cli: worker --processes, bad input", () => {
  it("N <= 0 or not an integer: a usage error naming the flag, exit 2, nothing forked", async () => {
    for (const n of ["0", "-2", "1.5", "many"]) {
      const { exited, output } = startCli(["worker", `--processes=${n}`], { REDIS_URL: "redis://127.0.0.1:1/0" });
      expect(await exited).toBe(2);
      expect(output()).toBe(
        `sidekiq-bridge worker: --processes must be an integer >= 1, got "${n}"\nRun 'sidekiq-bridge worker --help' for usage.\n`,
      );
    }
  });

  it("a handlers module that cannot load: the swarm stops with exit 1, no restart", async () => {
    const { exited, output } = startCli(["worker", "--processes", "2", "-r", "interop-tests/fixtures/no-such.mjs"], {
      REDIS_URL: "redis://127.0.0.1:1/0",
    });
    expect(await exited).toBe(1);
    expect(output()).toContain("could not start (exit code 1)");
    expect(output()).not.toContain("starting a new one");
  }, 30_000);
});
