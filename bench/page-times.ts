// What the dashboard benches share: a seeded throwaway redis-server, and the
// server time of each page over HTTP on loopback (request to last byte; the
// first request of each page is a warm-up), printed against a target.
import { Redis } from "ioredis";
import { startRedis } from "../harness/redis-server.js";

/** Starts Redis, runs `seed` (which says what it wrote), then `body`; stops Redis after. */
export async function withSeededRedis(
  seed: (redis: Redis) => Promise<string>,
  body: (url: string, redis: Redis) => Promise<void>,
): Promise<void> {
  const server = await startRedis({ databases: 1 });
  const redis = new Redis(server.url);
  try {
    const t0 = performance.now();
    const what = await seed(redis);
    console.log(`seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${what}`);
    await body(server.url, redis);
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

/** Median and max ms of `runs` GETs of each page (`url` maps a page to its URL); prints them and returns how many are over `targetMs`. */
export async function printPageTimes(
  pages: string[],
  url: (page: string) => string,
  runs: number,
  targetMs: number,
): Promise<number> {
  const rows: Array<[string, number, number]> = [];
  for (const p of pages) {
    const times: number[] = [];
    for (let i = 0; i < runs + 1; i++) {
      const start = performance.now();
      const res = await fetch(url(p));
      const body = await res.text();
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status}: ${body.slice(0, 200)}`);
      if (i > 0) times.push(ms); // the first is a warm-up
    }
    times.sort((a, b) => a - b);
    rows.push([p, times[Math.floor(times.length / 2)]!, times[times.length - 1]!]);
  }
  console.log(`\n${"page".padEnd(48)} ${"median ms".padStart(10)} ${"max ms".padStart(8)}  target ${targetMs} ms`);
  let over = 0;
  for (const [p, med, max] of rows) {
    const ok = med < targetMs;
    if (!ok) over++;
    console.log(`${p.padEnd(48)} ${med.toFixed(1).padStart(10)} ${max.toFixed(1).padStart(8)}  ${ok ? "ok" : "OVER"}`);
  }
  console.log(over === 0 ? "\nevery page under the target" : `\n${over} page(s) over the target`);
  return over;
}
