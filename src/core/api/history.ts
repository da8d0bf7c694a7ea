// Ruby's `Sidekiq::Stats::History` (api.rb): processed and failed jobs per
// day, from the daily counters `stat:processed:<YYYY-MM-DD>` and
// `stat:failed:<YYYY-MM-DD>` (UTC dates), newest day first: one MGET per
// counter, as Ruby reads them.
import { dailyStatKeys, statsDate } from "../wire/keys.js";
import type { ApiContext } from "./context.js";

/** One day of `Sidekiq::Stats::History`. */
export interface DayCount {
  /** YYYY-MM-DD (UTC). */
  date: string;
  processed: number;
  failed: number;
}

/** The daily counters live five years (Launcher::STATS_TTL), so Ruby's History refuses more days. */
const MAX_DAYS = 5 * 365;
const DAY_MS = 86_400_000;

/** `Sidekiq::Stats::History`: jobs processed and failed per day over the last `days` days. */
export class StatsHistory {
  /** The days read, newest first (YYYY-MM-DD, UTC). */
  readonly dates: readonly string[];

  /**
   * `History.new(days_previous, start_date)`: `days` (1 to 1825) days ending
   * with the day of `startDate` (epoch ms or a Date; default now).
   */
  constructor(
    private readonly ctx: ApiContext,
    days: number,
    startDate: number | Date = ctx.now(),
  ) {
    if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS)
      throw new RangeError(`History reads 1 to ${MAX_DAYS} days, not ${days}`);
    const start = startDate instanceof Date ? startDate.getTime() : startDate;
    this.dates = Array.from({ length: days }, (_, i) => statsDate(start - i * DAY_MS));
  }

  /** `History#processed`: date => jobs processed that day, newest first (0 without a counter). */
  async processed(): Promise<Record<string, number>> {
    return this.byDate(await this.counts("processed"));
  }

  /** `History#failed`: date => jobs failed that day, newest first. */
  async failed(): Promise<Record<string, number>> {
    return this.byDate(await this.counts("failed"));
  }

  /** Both counters of each day, newest first (the two MGETs in parallel). */
  async days(): Promise<DayCount[]> {
    const [processed, failed] = await Promise.all([this.counts("processed"), this.counts("failed")]);
    return this.dates.map((date, i) => ({ date, processed: processed[i]!, failed: failed[i]! }));
  }

  private async counts(stat: "processed" | "failed"): Promise<number[]> {
    const values = await this.ctx.redis.mget(this.dates.map((d) => dailyStatKeys(d)[stat]));
    return values.map((v) => parseInt(v ?? "0", 10) || 0);
  }

  private byDate(counts: number[]): Record<string, number> {
    return Object.fromEntries(this.dates.map((d, i) => [d, counts[i]!]));
  }
}
