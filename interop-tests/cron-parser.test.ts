// sidekiq-cron's cron syntax in Node (src/cron/schedule.ts, croner underneath)
// against fugit 1.13 run in Ruby: for every expression of the corpus, the same
// validity, and from each starting instant the same previous fire time and the
// same next three. Run where et-orbi 1.4 is installed (forky: Sidekiq 8.1.7);
// trixie's et-orbi 1.2.7 lacks the weekday modulo (`mon%2`) fugit needs.
//
// Where croner alone disagrees with fugit, schedule.ts follows fugit. The test
// prints those expressions; with croner 11.0.1 they were: the fugit extensions
// croner does not read (5/15, */90, 0 */27, wrap-around ranges 50-10, 22-2,
// fri-mon, 28-3, 11-2, hour 24, last, -1, -2, -7--1, fri#-1, mon%2, tue%3+1,
// 1-7 * mon&, */2 * 1-5&, @noon, stray commas), and at DST changes every
// fixed-time pattern in a zone with DST (0 2, 30 2, 0 30 2 *, 30 1, 0 1,
// 0 3 Pacific/Chatham): croner moves a time inside a gap to after it and runs a
// repeated time once; fugit skips the gap and fires at both occurrences.
import { Cron } from "croner";
import { expect, it } from "vitest";
import { CronSchedule } from "../src/cron/schedule.js";
import { CRON_EXPRESSIONS, CRON_STARTS } from "./fixtures/cron-expressions.js";
import { CRON_PEERS } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";

const NEXT = 3;

interface FugitResult {
  e: string;
  valid: boolean;
  r?: Array<{ prev: number; next: number[] } | { error: string }>;
}

/** What croner alone (a plain 5/6-field pattern, the zone as an option) answers, or undefined if it refuses. */
function rawCroner(expr: string, start: Date): { prev: number; next: number[] } | undefined {
  try {
    const tokens = expr.trim().split(/\s+/);
    const tz = tokens.length > 5 && /^[A-Z][A-Za-z_]+\//.test(tokens.at(-1)!) ? tokens.pop() : undefined;
    const c = new Cron(tokens.join(" "), { paused: true, timezone: tz ?? "UTC" });
    const next: number[] = [];
    let cur = start;
    for (let k = 0; k < NEXT; k++) {
      const n = c.nextRun(cur);
      if (!n) break;
      next.push(n.getTime() / 1000);
      cur = n;
    }
    const p = c.previousRuns(1, new Date((Math.floor(start.getTime() / 1000) - 1) * 1000 + 500))[0];
    return { prev: p ? p.getTime() / 1000 : Number.NaN, next };
  } catch {
    return undefined;
  }
}

describeEachSidekiq(
  "cron: Node's cron parser against fugit",
  (sk) => {
    it(`agrees with fugit on ${CRON_EXPRESSIONS.length} expressions from ${CRON_STARTS.length} instants`, {
      timeout: 900_000,
    }, async () => {
      expect(CRON_EXPRESSIONS.length).toBeGreaterThanOrEqual(200);
      const fugit = await sk.ruby<FugitResult[]>(
        `
        require "fugit"
        exprs = JSON.parse(${JSON.stringify(JSON.stringify(CRON_EXPRESSIONS))})
        starts = JSON.parse(${JSON.stringify(JSON.stringify(CRON_STARTS))})
        exprs.map do |e|
          c = Fugit.parse_cron(e) rescue nil
          next {"e" => e, "valid" => false} unless c
          r = starts.map do |s|
            t = Time.iso8601(s)
            nx = []
            cur = t
            ${NEXT}.times { cur = c.next_time(cur); nx << cur.to_f }
            {"prev" => c.previous_time(t).to_f, "next" => nx}
          rescue => ex
            {"error" => ex.message}
          end
          {"e" => e, "valid" => true, "r" => r}
        end
        `,
        sk.peers(...CRON_PEERS),
      );
      const mismatches: string[] = [];
      const cronerAlone = new Set<string>();
      for (const f of fugit) {
        let schedule: CronSchedule | undefined;
        try {
          schedule = new CronSchedule(f.e);
        } catch (e) {
          if (f.valid) mismatches.push(`${JSON.stringify(f.e)}: fugit reads it, Node refuses: ${(e as Error).message}`);
          cronerAlone.add(f.e);
          continue;
        }
        if (!f.valid) {
          mismatches.push(`${JSON.stringify(f.e)}: fugit refuses it, Node reads it`);
          continue;
        }
        CRON_STARTS.forEach((s, i) => {
          const want = f.r![i]!;
          if ("error" in want) {
            mismatches.push(`${JSON.stringify(f.e)} from ${s}: fugit failed: ${want.error}`);
            return;
          }
          const start = new Date(s);
          const next: number[] = [];
          let cur = start;
          for (let k = 0; k < NEXT; k++) {
            const n = schedule!.nextTime(cur);
            if (!n) break;
            next.push(n.getTime() / 1000);
            cur = n;
          }
          const prev = (schedule!.previousTime(start)?.getTime() ?? Number.NaN) / 1000;
          if (prev !== want.prev || JSON.stringify(next) !== JSON.stringify(want.next)) {
            const iso = (x: number) => new Date(x * 1000).toISOString();
            mismatches.push(
              `${JSON.stringify(f.e)} from ${s}: Node prev ${iso(prev)} next ${next.map(iso)}; fugit prev ${iso(want.prev)} next ${want.next.map(iso)}`,
            );
          }
          const raw = rawCroner(f.e, start);
          if (!raw || raw.prev !== want.prev || JSON.stringify(raw.next) !== JSON.stringify(want.next))
            cronerAlone.add(f.e);
        });
      }
      console.log(
        `cron expressions where croner alone disagrees with fugit and schedule.ts follows fugit (${cronerAlone.size}):\n  ${[...cronerAlone].map((e) => JSON.stringify(e)).join("\n  ")}`,
      );
      expect(mismatches).toEqual([]);
      // Both valid and invalid expressions were checked.
      expect(fugit.filter((f) => f.valid).length).toBeGreaterThan(200);
      expect(fugit.filter((f) => !f.valid).length).toBeGreaterThan(10);
    });
  },
  (t) => t.dialect === 8,
);
