// 6. The ceiling: redis-benchmark (Debian's redis-tools, shipped with
// redis-server) against the same kind of fresh Redis, on the CPU the systems
// under test get, with an element the size of a real job payload. LPUSH with 1
// and 50 clients bounds single enqueue; a variadic LPUSH of 1,000 elements
// bounds bulk enqueue (elements/s); BRPOP with 1, 10 and 50 clients bounds the
// drains. Each run refills the list by its LPUSH tests before popping.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { BenchConfig } from "../config.js";
import { pinnedArgv, TEST_CPU } from "../lib/cpu.js";
import type { Results } from "../report/model.js";
import type { BenchRedis } from "../systems/types.js";
import { runPlan } from "./context.js";

const run = promisify(execFile);

export function redisBenchmarkVersion(): Promise<string> {
  return run("redis-benchmark", ["--version"]).then(
    (r) => r.stdout.trim(),
    () => "",
  );
}

async function bench(port: number, n: number, clients: number, command: string[]): Promise<number> {
  const [cmd, ...args] = pinnedArgv(TEST_CPU, [
    "redis-benchmark",
    "-h",
    "127.0.0.1",
    "-p",
    String(port),
    "-n",
    String(n),
    "-c",
    String(clients),
    "--csv",
    ...command,
  ]);
  const { stdout } = await run(cmd!, args, { maxBuffer: 64 * 1024 * 1024 });
  // The CSV repeats the command (with the payload) in its first field: read the numbers at the end.
  const lines = stdout.trim().split("\n");
  const m = /"([\d.]+)","[\d.]+","[\d.]+","[\d.]+","[\d.]+","[\d.]+","[\d.]+"\s*$/.exec(lines[lines.length - 1] ?? "");
  if (!m) throw new Error(`unexpected redis-benchmark output: ${stdout.slice(-300)}`);
  return Number(m[1]);
}

export async function ceilingScenario(
  cfg: BenchConfig,
  r: BenchRedis,
  results: Results,
  payload: string,
  log: (m: string) => void,
): Promise<void> {
  const port = Number(new URL(r.url).port);
  const c = cfg.counts;
  const key = "bench:ceiling";
  const bulk = Array.from({ length: c.bulkBatch }, () => payload);
  for (const p of runPlan(cfg)) {
    await r.redis.flushall();
    const lpush1 = await bench(port, c.ceilingOne, 1, ["lpush", key, payload]);
    const lpush50 = await bench(port, c.ceilingMany, 50, ["lpush", key, payload]);
    const lpushBulk = (await bench(port, c.ceilingBulk, 1, ["lpush", key, ...bulk])) * c.bulkBatch;
    const brpop1 = await bench(port, c.ceilingOne, 1, ["brpop", key, "1"]);
    const brpop10 = await bench(port, c.ceilingMany, 10, ["brpop", key, "1"]);
    const brpop50 = await bench(port, c.ceilingMany, 50, ["brpop", key, "1"]);
    const fig: Array<[string, number]> = [
      ["ceiling.lpush.c1", lpush1],
      ["ceiling.lpush.c50", lpush50],
      ["ceiling.lpush.bulk", lpushBulk],
      ["ceiling.brpop.c1", brpop1],
      ["ceiling.brpop.c10", brpop10],
      ["ceiling.brpop.c50", brpop50],
    ];
    for (const [id, v] of fig) results.add("ceiling", id, v, p.warmup);
    log(`${p.label}: ${fig.map(([id, v]) => `${id.slice(8)} ${Math.round(v).toLocaleString("en-US")}/s`).join(", ")}`);
  }
}
