// sidekiq-scheduler's scheduler (SidekiqScheduler::Scheduler on
// rufus-scheduler) as a Node service. It loads the schedules of the gem's
// `schedules` hash, fires each at the times rufus would (timing.ts), and for
// each trigger of an enabled schedule makes the gem's own claim: a ZADD of the
// claimed instant's integer epoch to `sidekiq-scheduler:pushed:<name>`, and
// only the scheduler whose ZADD adds it pushes. A cron schedule claims its
// fire time and an `at` its point in time, so Ruby and Node schedulers enqueue
// those once; `every`, `interval` and `in` claim their own trigger second, as
// each Ruby process does, so each scheduler enqueues them on its own cadence
// (docs/SCHEDULER.md). After each trigger it writes last_times and next_times
// as the gem's `on_post_trigger` does, so Ruby's Recurring Jobs tab shows them.
//
// Changes are read from `schedules_changed` every `dynamicEvery`, as the gem's
// `dynamic` mode does. Unlike the gem, one schedule that cannot be read (not
// JSON, a bad expression, no class) is logged once and skipped, and the others
// keep running.
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import type { Logger } from "../../core/logging/logger.js";
import {
  AddonClaims,
  claimedBy,
  NOTHING_TO_PUSH,
  prepareAddonPush,
  type PreparedClaim,
  type ClaimStageHook,
} from "../pollers/claims.js";
import { enqueueSchedule, type EnqueueOptions } from "./enqueue.js";
import { PUSHED_TTL_SECONDS } from "./keys.js";
import { SchedulerApi } from "./scheduler-api.js";
import {
  entryTiming,
  prepareStatic,
  railsEnvMatches,
  type ScheduleConfig,
  type ScheduleEntry,
} from "./schedule-entry.js";
import {
  formatEoTime,
  overlapAllowed,
  parseDuration,
  RUFUS_FREQUENCY_MS,
  RUFUS_MAX_WORK_THREADS,
  type Timing,
} from "./timing.js";

/** The `:scheduler:` section of sidekiq.yml, as a worker's `sidekiqScheduler` option. */
export interface SidekiqSchedulerSettings {
  /**
   * A static schedule (the section's `schedule:` map). Unless `dynamic`, it is
   * written over the Redis one at start (`Sidekiq.schedule = ...`, names only in
   * Redis removed), as a Ruby process with this config does. Without it, Node
   * runs what Redis holds and never writes the schedules.
   */
  schedule?: Record<string, ScheduleConfig>;
  /** `dynamic`: read the schedules from Redis and follow their changes (default: true without a static schedule). */
  dynamic?: boolean;
  /** `dynamic_every`: how often changes are read, a duration ("5s", default) or seconds. */
  dynamicEvery?: string | number;
  /** `enabled`: false turns the scheduler off (as the option `false` does). */
  enabled?: boolean;
  /** `SidekiqScheduler::RedisManager.key_prefix`. */
  keyPrefix?: string;
  /** The RAILS_ENV schedules with `rails_env` are matched against (default: the environment's). */
  railsEnv?: string;
  /** The loop's period in ms (rufus' `frequency`, 300). */
  tickMs?: number;
}

export interface SchedulerPollerOptions extends SidekiqSchedulerSettings, EnqueueOptions {
  redis: Redis;
  client: Client;
  logger: Logger;
  /** Epoch milliseconds (a clock for tests). */
  now?: () => number;
  /**
   * The process's identity (a worker's, whose heartbeat says it is alive): its
   * claims are recoverable by other Node schedulers if it dies before pushing.
   * Without one, it claims and pushes as the gem does.
   */
  identity?: string;
  /** After each step of a won claim (tests stop the process there). */
  onClaimStage?: ClaimStageHook;
}

interface Loaded {
  entry: ScheduleEntry;
  timing: Timing;
  /** Triggers still running: a trigger that waits on a silent Redis does not hold the next one back, as in rufus. */
  firing: Set<Promise<void>>;
  overlap: boolean;
}

/** What a trigger did, for tests and log lines. */
export interface TriggerResult {
  name: string;
  /** The second claimed (null: disabled, or a limit ended it). */
  second: number | null;
  /** Whether this scheduler's claim won and it pushed. */
  pushed: boolean;
  jid?: string | null;
}

export class SidekiqSchedulerPoller {
  readonly name = "sidekiq-scheduler";
  readonly api: SchedulerApi;
  private readonly jobs = new Map<string, Loaded>();
  private readonly reported = new Map<string, string>();
  private tickTimer?: NodeJS.Timeout;
  private updateTimer?: NodeJS.Timeout;
  private updating?: Promise<void>;
  private lastChanged = 0;
  private stopped = false;
  private active = false;
  /** Triggers running across every schedule. */
  private running = 0;
  private initialized = false;
  /** Jobs this scheduler has pushed since it started. */
  enqueuedCount = 0;
  /** Every trigger's outcome, when a test listens. */
  onTrigger?: (r: TriggerResult) => void;

  private readonly claims?: AddonClaims;
  private recovering?: Promise<void>;

  constructor(private readonly options: SchedulerPollerOptions) {
    this.api = new SchedulerApi(options);
    if (options.identity)
      this.claims = new AddonClaims(options.redis, "scheduler", options.identity, undefined, options.onClaimStage);
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now();
  }

  private get followsRedis(): boolean {
    return this.options.dynamic ?? this.options.schedule === undefined;
  }

  private report(key: string, problem: string): void {
    if (this.reported.get(key) === problem) return;
    this.reported.set(key, problem);
    this.options.logger.warn(`sidekiq-scheduler: ${problem}`);
  }

  private cleared(key: string): void {
    if (this.reported.delete(key)) this.options.logger.info(`sidekiq-scheduler: schedule "${key}" is readable again`);
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.options.enabled === false) {
      this.options.logger.info("sidekiq-scheduler: disabled (enabled: false)");
      return;
    }
    await this.initialLoad();
    const tick = this.options.tickMs ?? RUFUS_FREQUENCY_MS;
    this.tickTimer = setInterval(() => this.tick(), tick);
    this.tickTimer.unref();
    const every = parseDuration(this.options.dynamicEvery ?? "5s");
    this.updateTimer = setInterval(
      () => {
        // Changes are followed in dynamic mode; a load that failed (Redis away at start) is retried in any mode.
        this.recoverClaims();
        if (this.updating || (this.initialized && !this.followsRedis)) return;
        this.updating = (this.initialized ? this.update() : this.initialLoad())
          .catch((e: Error) => this.options.logger.error(`sidekiq-scheduler: ${e.message}`))
          .finally(() => (this.updating = undefined));
      },
      Math.max(RUFUS_FREQUENCY_MS, (every ?? 5) * 1000),
    );
    this.updateTimer.unref();
  }

  /** The gem's startup: the static schedule written (unless dynamic), then every schedule loaded. */
  private async initialLoad(): Promise<void> {
    try {
      // A `schedules_changed` of the 3.x type (SET) goes.
      const type = await this.options.redis.type(this.api.keys.schedulesChanged);
      if (type !== "zset" && type !== "none") await this.options.redis.del(this.api.keys.schedulesChanged);
      if (this.options.schedule && !this.followsRedis) await this.api.replaceAll(prepareStatic(this.options.schedule));
      this.lastChanged = this.now() / 1000;
      await this.loadAll();
      this.initialized = true;
    } catch (e) {
      this.report("(load)", `cannot load the schedules, retried every dynamicEvery: ${(e as Error).message}`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.updateTimer) clearInterval(this.updateTimer);
    await this.updating;
    await this.recovering;
    await Promise.all([...this.jobs.values()].flatMap((j) => [...j.firing]));
  }

  /** Names of the loaded schedules with their next trigger (epoch ms, null: none). */
  loaded(): Array<{ name: string; next: number | null }> {
    return [...this.jobs.values()].map((j) => ({ name: j.entry.name, next: j.timing.next }));
  }

  private async loadAll(): Promise<void> {
    const { entries, unreadable } = await this.api.list();
    for (const u of unreadable)
      this.report(u.name, `schedule "${u.name}" cannot be read, skipped (other schedules still run): ${u.error}`);
    for (const e of entries) await this.load(e);
    if (!this.active && this.jobs.size > 0) {
      this.active = true;
      this.options.logger.info(`sidekiq-scheduler: ${this.jobs.size} schedules loaded`);
    }
  }

  /** `load_schedule_job`: builds its clock and writes its next time. */
  private async load(entry: ScheduleEntry): Promise<void> {
    this.jobs.delete(entry.name);
    if (!railsEnvMatches(entry, this.options.railsEnv)) return;
    const now = this.now();
    let timing: Timing | null;
    try {
      timing = entryTiming(entry, now);
    } catch (e) {
      this.report(
        entry.name,
        `schedule "${entry.name}" is invalid, skipped (other schedules still run): ${(e as Error).message}`,
      );
      return;
    }
    if (!entry.className)
      this.report(
        entry.name,
        `schedule "${entry.name}" has no class: each trigger is claimed and nothing is pushed, as Sidekiq::Client.push refuses it in Ruby`,
      );
    else this.cleared(entry.name);
    if (!timing) return; // an `at` already past: rufus drops it
    this.jobs.set(entry.name, { entry, timing, firing: new Set(), overlap: overlapAllowed(entry.value) });
    await this.writeNext(entry.name, timing);
  }

  private async writeNext(name: string, timing: Timing): Promise<void> {
    if (timing.next === null) await this.options.redis.hdel(this.api.keys.nextTimes, name);
    else await this.options.redis.hset(this.api.keys.nextTimes, name, formatEoTime(timing.next));
  }

  /** `update_schedule`: the names changed since the last look are reloaded (or dropped). */
  async update(): Promise<void> {
    const from = this.lastChanged;
    const to = this.now() / 1000;
    this.lastChanged = to;
    const changed = await this.options.redis.zrangebyscore(this.api.keys.schedulesChanged, String(from), `(${to}`);
    if (changed.length === 0) return;
    const { entries, unreadable } = await this.api.list();
    for (const name of new Set(changed)) {
      const entry = entries.find((e) => e.name === name);
      const bad = unreadable.find((u) => u.name === name);
      if (bad)
        this.report(name, `schedule "${name}" cannot be read, skipped (other schedules still run): ${bad.error}`);
      if (entry) await this.load(entry);
      else this.jobs.delete(name);
    }
    if (!this.active && this.jobs.size > 0) {
      this.active = true;
      this.options.logger.info(`sidekiq-scheduler: ${this.jobs.size} schedules loaded`);
    }
  }

  private tick(): void {
    if (this.stopped) return;
    const now = this.now();
    for (const job of this.jobs.values()) {
      if (job.timing.next === null || job.timing.next > now) continue;
      if (job.firing.size > 0 && !job.overlap) continue;
      // rufus's work threads: past this many, a due trigger waits for one to end (its fire time is then the latest due).
      if (this.running >= RUFUS_MAX_WORK_THREADS) return;
      const firing: Promise<void> = this.fire(job, now)
        .then((r) => this.onTrigger?.(r))
        .catch((e: Error) => this.options.logger.error(`sidekiq-scheduler: schedule "${job.entry.name}": ${e.message}`))
        .finally(() => {
          job.firing.delete(firing);
          this.running--;
        });
      job.firing.add(firing);
      this.running++;
    }
  }

  /** One trigger: the gem's block (enabled? claim, push) then `on_post_trigger` (last and next times). */
  private async fire(job: Loaded, now: number): Promise<TriggerResult> {
    const { entry, timing } = job;
    const claimed = timing.trigger(now);
    const result: TriggerResult = { name: entry.name, second: null, pushed: false };
    if (claimed === null) return result; // a `times` or `last_at` limit ended it
    let enabled: boolean;
    try {
      enabled = await this.api.isEnabled(entry);
    } catch (e) {
      this.report(
        `${entry.name}:state`,
        `the state of schedule "${entry.name}" is not JSON, not enqueued: ${(e as Error).message}`,
      );
      enabled = false;
    }
    if (enabled) {
      const second = Math.floor(claimed / 1000);
      const key = this.api.keys.pushed(entry.name);
      result.second = second;
      const won = await this.claim(key, second, entry, claimed);
      if (won) {
        result.pushed = true;
        if (entry.className) {
          try {
            result.jid = await won.push();
            this.enqueuedCount++;
            this.options.logger.debug(`sidekiq-scheduler: queueing ${entry.className} (${entry.name})`, {
              claimed: second,
              jid: result.jid,
            });
          } catch (e) {
            // `handle_errors`: logged, and the scheduler goes on.
            this.report(`${entry.name}:push`, `schedule "${entry.name}" could not be pushed: ${(e as Error).message}`);
          }
        } else await won.nothing();
        await this.options.redis.zremrangebyscore(key, 0, Math.floor(this.now() / 1000) - PUSHED_TTL_SECONDS);
      } else {
        this.options.logger.debug(`sidekiq-scheduler: ${entry.name} already enqueued`, { claimed: second });
      }
    }
    timing.done(this.now());
    await this.options.redis.hset(this.api.keys.lastTimes, entry.name, formatEoTime(now));
    if (this.jobs.get(entry.name) === job) await this.writeNext(entry.name, timing);
    return result;
  }

  /**
   * The gem's claim of `second` (a ZADD to its pushed key, then EXPIRE); with
   * an identity, recoverable (src/addons/pollers/claims.ts). Undefined when another
   * scheduler won; else how to push the job, or to record that nothing is.
   */
  private async claim(
    key: string,
    second: number,
    entry: ScheduleEntry,
    claimed: number,
  ): Promise<{ push(): Promise<string | null>; nothing(): Promise<unknown> } | undefined> {
    const claims = this.claims;
    if (!claims) {
      const replies = await this.options.redis.multi().zadd(key, second, second).expire(key, PUSHED_TTL_SECONDS).exec();
      if (replies?.[0]?.[1] !== 1) return undefined;
      return {
        push: () => enqueueSchedule(this.options.client, entry, claimed, this.options),
        nothing: async () => undefined,
      };
    }
    const target = { set: key, score: second, member: String(second), expire: PUSHED_TTL_SECONDS };
    const won = await claims.claim(target, { name: entry.name, claimed });
    if (!won) return undefined;
    return {
      // Null as well when recovery took the claim over, thinking this process dead: it pushes.
      push: async () => (await claims.pushPrepared(won, () => this.prepare(entry, claimed)))?.jid ?? null,
      nothing: () => claims.push(won, NOTHING_TO_PUSH),
    };
  }

  /** The job `enqueue_job` would push for `claimed` (epoch ms), prepared for a claim's push. */
  private prepare(entry: ScheduleEntry, claimed: number): Promise<PreparedClaim> {
    return prepareAddonPush(this.options.client, this.options.redis, (c) =>
      enqueueSchedule(c, entry, claimed, this.options),
    );
  }

  /** Pushes, once, the triggers dead Node schedulers claimed and did not push (a slice each time). */
  private recoverClaims(): void {
    const claims = this.claims;
    if (!claims || this.recovering || this.stopped) return;
    this.recovering = claims
      .recover(async (info) => {
        const entry = await this.api.find(String(info.name));
        return entry?.className ? this.prepare(entry, Number(info.claimed)) : undefined;
      })
      .then((recovered) => {
        for (const r of recovered)
          this.options.logger.warn(
            `sidekiq-scheduler: pushed ${r.info.name} for ${Math.floor(Number(r.info.claimed) / 1000)}, claimed by ${claimedBy(r.owner, this.options.identity)}`,
          );
      })
      .catch((e: Error) =>
        this.options.logger.error(`sidekiq-scheduler: recovering claims of dead processes: ${e.message}`),
      )
      .finally(() => (this.recovering = undefined));
  }
}
