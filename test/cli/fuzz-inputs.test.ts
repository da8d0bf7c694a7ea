// Seeded fuzzing of the CLI's inputs, in process, against a real Redis (or
// Valkey): hostile actions, flag names and values, queue names and jids for
// the commands that read and act on the fleet (stats, queues, processes,
// scheduled, retries, dead). No command may throw past its exit code or print
// a stack trace, a usage error exits 2 and says how to get help, and an action
// moves only the entries whose jid it names: every other job stays where it was.
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { Rng } from "../../chaos/fuzz/prng.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";
import { HOSTILE_TEXT } from "../support/hostile-inputs.js";
import * as processes from "../../src/tools/cli/processes-command.js";
import * as queues from "../../src/tools/cli/queues-command.js";
import { dead, retries, scheduled } from "../../src/tools/cli/sorted-set-command.js";
import * as stats from "../../src/tools/cli/stats-command.js";

const CASES = Number(process.env.CLI_FUZZ_CASES ?? 400);
const SEED = Number(process.env.CLI_FUZZ_SEED ?? 1);

const HOSTILE = [...HOSTILE_TEXT, "--", "-", "j01", "j1", "J01", "j01 ", "1700000001.0-j01"];
const FLAGS = [
  "--class",
  "--queue",
  "--limit",
  "--offset",
  "--json",
  "--yes",
  "--batch-size",
  "--only",
  "--work",
  "--host",
  "--api-version",
  "--bogus",
  "-x",
];
const BOOLEAN_FLAGS = new Set(["--json", "--yes", "--work"]);

type Run = (argv: string[]) => Promise<number>;
const COMMANDS: Record<string, { run: Run; actions: string[] }> = {
  stats: { run: stats.run, actions: [] },
  queues: { run: queues.run, actions: ["list", "show", "clear"] },
  processes: { run: processes.run, actions: [] },
  scheduled: { run: scheduled.run, actions: ["list", "delete", "add-to-queue", "kill"] },
  retries: { run: retries.run, actions: ["list", "retry", "delete", "add-to-queue", "kill"] },
  dead: { run: dead.run, actions: ["list", "retry", "delete", "add-to-queue"] },
};
const SETS = ["schedule", "retry", "dead"] as const;
const QUEUES = ["default", "fz", "日本"];
const STACK = /\n\s+at .+:\d+:\d+\)?/;

const jidOf = (i: number) => `j${String(i).padStart(2, "0")}`;
const job = (i: number, queue: string) =>
  JSON.stringify({
    class: i % 2 ? "OddJob" : "<fz-x>Job",
    args: [i, "<fz-x>"],
    jid: jidOf(i),
    queue,
    retry: true,
    created_at: 1_700_000_000.5,
    enqueued_at: 1_700_000_000.5,
    retry_count: 1,
    error_class: "RuntimeError",
    error_message: "<fz-x>",
    failed_at: 1_700_000_000.5,
  });

/** Where each jid is: the key it is in (a job in two keys counts twice). */
async function locations(redis: Redis): Promise<Map<string, string[]>> {
  const at = new Map<string, string[]>();
  const put = (raw: string, key: string) => {
    const jid = (JSON.parse(raw) as { jid: string }).jid;
    at.set(jid, [...(at.get(jid) ?? []), key].sort());
  };
  for (const set of SETS) for (const raw of await redis.zrange(set, 0, -1)) put(raw, set);
  for (const q of QUEUES) for (const raw of await redis.lrange(`queue:${q}`, 0, -1)) put(raw, `queue:${q}`);
  return at;
}

describe("CLI inputs, fuzzed: clear errors, no stack traces, no action on the wrong job", () => {
  let server: RedisServer;
  let redis: Redis;
  let out = "";
  let err = "";

  beforeAll(async () => {
    server = await startServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis.disconnect();
    await server.stop();
  });
  beforeEach(() => {
    vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
    vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
    // The commands also print through console, which vitest takes over.
    const line =
      (to: "out" | "err") =>
      (...a: unknown[]) => {
        const text = `${a.map(String).join(" ")}\n`;
        if (to === "out") out += text;
        else err += text;
      };
    vi.spyOn(console, "log").mockImplementation(line("out"));
    vi.spyOn(console, "info").mockImplementation(line("out"));
    vi.spyOn(console, "warn").mockImplementation(line("err"));
    vi.spyOn(console, "error").mockImplementation(line("err"));
  });
  afterEach(() => vi.restoreAllMocks());

  /** 60 jobs, each jid once: 15 in each sorted set, 5 in each queue. */
  async function seed(): Promise<void> {
    await redis.flushdb();
    let i = 0;
    // Recent scores: a kill trims the dead set of what died more than 6 months ago, as Ruby's does.
    const now = Math.floor(Date.now() / 1000);
    for (const set of SETS)
      for (let k = 0; k < 15; k++, i++) await redis.zadd(set, String(now - 1000 + i), job(i, QUEUES[k % 3]!));
    for (const q of QUEUES) {
      for (let k = 0; k < 5; k++, i++) await redis.lpush(`queue:${q}`, job(i, q));
      await redis.sadd("queues", q);
    }
  }

  function argvFor(rng: Rng): { name: string; argv: string[]; named: Set<string> } {
    const name = rng.pick(Object.keys(COMMANDS));
    const { actions } = COMMANDS[name]!;
    const argv: string[] = [];
    const named = new Set<string>();
    const value = () => (rng.chance(0.5) ? rng.pick(HOSTILE) : String(rng.int(40)));
    if (actions.length && rng.chance(0.85)) argv.push(rng.chance(0.9) ? rng.pick(actions) : rng.pick(HOSTILE));
    for (let n = rng.int(4); n > 0; n--) {
      if (rng.chance(0.5)) {
        const positional = rng.chance(0.5) ? jidOf(rng.int(75)) : rng.pick([...HOSTILE, ...QUEUES]);
        argv.push(positional);
        named.add(positional);
      } else {
        const flag = rng.pick(FLAGS);
        argv.push(flag);
        if (!BOOLEAN_FLAGS.has(flag) || rng.chance(0.1)) argv.push(value());
      }
    }
    return { name, argv, named };
  }

  it(`${CASES} seeded command lines (CLI_FUZZ_SEED=${SEED})`, { timeout: 120_000 }, async () => {
    const rng = new Rng(SEED);
    // What the run covered, so a generator gone dull fails the test too.
    const seen = { ok: 0, usage: 0, moved: 0 };
    await seed();
    for (let c = 0; c < CASES; c++) {
      if (c % 50 === 0) await seed();
      const { name, argv, named } = argvFor(rng);
      const full = [...argv, "--redis", server.url];
      const where = `case ${c}: ${name} ${JSON.stringify(argv).slice(0, 300)}`;
      const before = await locations(redis);
      out = "";
      err = "";
      let code: number | Error;
      try {
        code = await COMMANDS[name]!.run(full);
      } catch (e) {
        code = e as Error;
      }
      expect(code, `${where}: threw ${String(code)}`).toBeTypeOf("number");
      expect([0, 1, 2, 3], `${where}: exit ${String(code)}`).toContain(code);
      expect(err, `${where}: stack trace on stderr`).not.toMatch(STACK);
      expect(out, `${where}: stack trace on stdout`).not.toMatch(STACK);
      if (code === 2) expect(err, where).toContain(`Run 'sidekiq-bridge ${name} --help'`);
      // A failure says why: on stderr, or with --json in the JSON document.
      if (code !== 0)
        expect(`${err}${argv.includes("--json") ? out : ""}`.trim(), `${where}: failed without a word`).not.toBe("");

      // Every job not named by the command line is where it was; a cleared
      // queue (queues clear NAME --yes) may lose the jobs it held.
      const cleared = argv[0] === "clear" && code === 0 ? `queue:${[...named][0] ?? ""}` : undefined;
      const after = await locations(redis);
      for (const [jid, keys] of before) {
        if (named.has(jid)) continue;
        if (cleared && keys.includes(cleared)) continue;
        expect(after.get(jid), `${where}: ${jid} moved from ${keys.join(",")}`).toEqual(keys);
      }
      for (const jid of after.keys()) expect(before.has(jid), `${where}: ${jid} appeared`).toBe(true);
      if (code === 0) seen.ok++;
      if (code === 2) seen.usage++;
      if ([...named].some((j) => before.has(j) && String(after.get(j)) !== String(before.get(j)))) seen.moved++;
    }
    expect(seen.ok).toBeGreaterThan(CASES / 10);
    expect(seen.usage).toBeGreaterThan(CASES / 10);
    expect(seen.moved).toBeGreaterThan(CASES / 50);
  });
});
