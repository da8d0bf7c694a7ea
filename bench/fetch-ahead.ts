// Reliable fetch with and without fetch-ahead, against basic fetch: drains of
// no-op jobs through the public Worker at concurrency 10 on a fresh Redis,
// the three interleaved in rounds in one process (the first round is a
// warm-up). Per drain: jobs/s, CPU µs a job (process.cpuUsage, user and
// system), event-loop utilisation (the share of the drain the worker was
// busy rather than waiting for Redis) and fetches. Medians of the measured
// rounds, and the ratios that the performance targets name.
//
//   npx tsx bench/fetch-ahead.ts                       # 40,000 jobs, 1 + 5 rounds
//   BENCH_JOBS=20000 BENCH_ROUNDS=3 npx tsx bench/fetch-ahead.ts
import { startRedis } from "../harness/redis-server.js";
import { timedDrain, type TimedDrain } from "./lib/timed-drain.js";
import { median } from "./measure/summary.js";

const JOBS = Number(process.env.BENCH_JOBS ?? 40_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);

const variants = [
  { name: "basic", fetch: "basic", fetchAhead: false },
  { name: "reliable, fetch-ahead (default)", fetch: "reliable", fetchAhead: true },
  { name: "reliable, fetchAhead: false", fetch: "reliable", fetchAhead: false },
] as const;

/** A timed drain, and how many fetches the worker made in it. */
type Figure = TimedDrain & { fetches: number };

async function drain(url: string, v: (typeof variants)[number]): Promise<Figure> {
  let fetches = 0;
  const f = await timedDrain({
    url,
    jobs: JOBS,
    queue: "ahead-bench",
    worker: { concurrency: CONCURRENCY, fetch: v.fetch, fetchAhead: v.fetchAhead },
    started: (worker) => worker.on("fetch", () => void fetches++),
  });
  return { ...f, fetches };
}

const server = await startRedis();
const url = `${server.url}/0`;
const figures = new Map<string, Figure[]>(variants.map((v) => [v.name, []]));
try {
  for (let round = 0; round <= ROUNDS; round++) {
    for (const v of variants) {
      const f = await drain(url, v);
      const label = round === 0 ? "warm-up" : `round ${round}/${ROUNDS}`;
      console.error(
        `${label} ${v.name}: ${Math.round(f.rate)} jobs/s, ${f.cpuUs.toFixed(1)} µs CPU a job (user ${f.userUs.toFixed(1)}, system ${f.systemUs.toFixed(1)}), event loop busy ${f.elu.toFixed(2)}, ${f.fetches} fetches`,
      );
      if (round > 0) figures.get(v.name)!.push(f);
    }
  }
} finally {
  await server.stop();
}

const med = (name: string, k: keyof Figure) => median(figures.get(name)!.map((f) => f[k]));
console.log(
  `Node ${process.version}, ${JOBS.toLocaleString()} no-op jobs, concurrency ${CONCURRENCY}, ${ROUNDS} rounds after a warm-up, medians`,
);
console.log("| variant | jobs/s | CPU µs a job | event loop busy | fetches |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const v of variants)
  console.log(
    `| ${v.name} | ${Math.round(med(v.name, "rate"))} | ${med(v.name, "cpuUs").toFixed(1)} | ${med(v.name, "elu").toFixed(2)} | ${med(v.name, "fetches")} |`,
  );
const [basic, ahead, off] = variants.map((v) => v.name) as [string, string, string];
console.log(
  `reliable/basic: fetch-ahead ${(med(ahead, "rate") / med(basic, "rate")).toFixed(2)}, without ${(med(off, "rate") / med(basic, "rate")).toFixed(2)}; fetch-ahead/without ${(med(ahead, "rate") / med(off, "rate")).toFixed(2)}`,
);
// Each round's own ratio: the three ran back to back, so machine noise mostly cancels.
const perRound = figures.get(ahead)!.map((f, i) => (f.rate / figures.get(off)![i]!.rate).toFixed(2));
console.log(`fetch-ahead/without, round by round: ${perRound.join(", ")}`);
