// `Sidekiq::Stats::History`: processed and failed per day from the
// `stat:processed:<YYYY-MM-DD>` and `stat:failed:<YYYY-MM-DD>` keys, newest day first.
import type { Redis } from "ioredis";
import { statsDate } from "../server/execution-stats.js";

export interface DayCount {
  /** YYYY-MM-DD (UTC). */
  date: string;
  processed: number;
  failed: number;
}

export async function statsHistory(redis: Redis, days: number, nowMs: number): Promise<DayCount[]> {
  const dates = Array.from({ length: days }, (_, i) => statsDate(nowMs - i * 86_400_000));
  if (dates.length === 0) return [];
  const [processed, failed] = await Promise.all([
    redis.mget(dates.map((d) => `stat:processed:${d}`)),
    redis.mget(dates.map((d) => `stat:failed:${d}`)),
  ]);
  return dates.map((date, i) => ({
    date,
    processed: parseInt(processed[i] ?? "0", 10) || 0,
    failed: parseInt(failed[i] ?? "0", 10) || 0,
  }));
}
