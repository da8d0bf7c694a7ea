// sidekiq-cron's cron syntax in Node (src/addons/fugit/cron.ts, croner underneath)
// against fugit 1.13 run in Ruby: for every expression of the corpus, the same
// validity, and from each starting instant the same previous fire time and the
// same next three. Run where et-orbi 1.4 is installed (forky: Sidekiq 8.1.7);
// trixie's et-orbi 1.2.7 lacks the weekday modulo (`mon%2`) fugit needs.
//
// Where croner alone disagrees with fugit, cron.ts follows fugit. The test
// prints those expressions; with croner 11.0.1 there were 43: fugit's
// extensions croner does not read or reads otherwise (5/15, */90, 0 */27,
// wrap-around ranges 50-10, 22-2, fri-mon, 28-3, 11-2, hour 24, last, -1, -2,
// -7--1, fri#-1, mon%2, tue%3+1, 1-7 * mon&, */2 * 1-5&, @noon, 0,,15, and
// 0 0 31 1-4 mon where fugit drops April), patterns fugit refuses and croner
// reads (0 0 30 2 *, 0 0 31 4,6 *, seven fields), and at DST changes every
// fixed-time pattern in a zone with DST (0 2, 30 2, 0 30 2 *, 30 1, 0 1 in
// Berlin, New York, Los Angeles, Sydney, London; 0 3 in Pacific/Chatham):
// croner moves a time inside a gap to after it and runs a repeated time once,
// fugit skips the gap and fires at both occurrences.
import { Cron } from "croner";
import { expect, it } from "vitest";
import { CronSchedule } from "../src/addons/fugit/cron.js";
import { CRON_EXPRESSIONS, CRON_STARTS } from "./fixtures/cron-expressions.js";
import { CRON_PEERS } from "./support/cron.js";
import { describeEachSidekiq } from "./support/harness.js";

const NEXT = 3;

interface FugitResult {
  e: string;
  valid: boolean;
  r?: Array<{ prev: number; next: number[] } | { error: string }>;
}

/** What croner alone answers (fields as written, the trailing zone as its option), or undefined if it refuses. */
function rawCroner(expr: string, start: Date): { prev: number; next: number[] } | undefined {
  try {
    const tokens = expr.trim().split(/\s+/);
    const last = tokens.at(-1)!;
    const zoned = tokens.length === 2 || tokens.length > 5;
    const offset = zoned ? /^([-+])(\d\d):?(\d\d)$/.exec(last) : null;
    const zone = zoned && !offset && /^[A-Z][A-Za-z_]*(\/[A-Za-z_]+)*$/.test(last) ? last : undefined;
    if (offset || zone) tokens.pop();
    const c = new Cron(tokens.join(" "), {
      paused: true,
      ...(offset
        ? { utcOffset: (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) }
        : { timezone: zone ?? "UTC" }),
    });
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
    it(
      `agrees with fugit on ${CRON_EXPRESSIONS.length} expressions from ${CRON_STARTS.length} instants`,
      {
        timeout: 900_000,
      },
      async () => {
        expect(CRON_EXPRESSIONS.length).toBeGreaterThanOrEqual(200);
        // In chunks: fugit is slow on rare schedules (Feb 29th, fifth Sundays) and each Ruby call has 120 s.
        const fugit: FugitResult[] = [];
        const CHUNK = 20;
        for (let at = 0; at < CRON_EXPRESSIONS.length; at += CHUNK) {
          const chunk = CRON_EXPRESSIONS.slice(at, at + CHUNK);
          fugit.push(
            ...(await sk.ruby<FugitResult[]>(
              `
          require "fugit"
          exprs = JSON.parse(${JSON.stringify(JSON.stringify(chunk))})
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
            )),
          );
        }
        const mismatches: string[] = [];
        const cronerAlone = new Set<string>();
        for (const f of fugit) {
          // croner alone: refusing what fugit reads, or reading what fugit refuses, is a disagreement too.
          if (!f.valid && rawCroner(f.e, new Date()) !== undefined) cronerAlone.add(f.e);
          let schedule: CronSchedule | undefined;
          try {
            schedule = new CronSchedule(f.e);
          } catch (e) {
            if (f.valid)
              mismatches.push(`${JSON.stringify(f.e)}: fugit reads it, Node refuses: ${(e as Error).message}`);
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
      },
    );
  },
  (t) => t.dialect === 8,
);
