// The process registry part of Sidekiq's Launcher, for Node: the heartbeat
// that makes a Node worker appear in `Sidekiq::ProcessSet`, `WorkSet` and the
// Web UI's Busy page, receives Quiet/Stop from them, and flushes the stats.
//
// Each beat sends exactly the commands of the profile's Ruby `Launcher#❤`
// (launcher.rb of 6.4.1, 7.3.2, 8.1.7; the steps between them follow the
// public tags: the `launcher` rules of wire/release-rules.ts):
//
//   6.0 – 6.4.1  MULTI{ INCRBY×2 EXPIRE INCRBY×2 EXPIRE (stats, even when 0)
//                       UNLINK <id>:workers, HSET <id>:workers tid work …, EXPIRE 60 }
//   6.4.2 – 6.x  MULTI{ the six stat commands }, pipeline{ UNLINK <id>:work, HSET …, EXPIRE 60 }
//   7.0 – 7.2.2  flush_stats (pipeline, skipped when 0), pipeline{ UNLINK, HSET per tid, EXPIRE }
//   7.2.3+       flush_stats, MULTI{ UNLINK <id>:work [, HSET <id>:work tid work …, EXPIRE 60 when busy] }
//   then         PING (rtt_us, 6.2+), MULTI{ SADD processes id, EXISTS id,
//                HMSET (HSET from 7.1) id info [concurrency 8.1.2+] busy beat rtt_us quiet rss,
//                EXPIRE id 60, RPOP id-signals }
//   7.0+         metrics flush (the `:beat` event), then the popped signal is acted on.
//
// Work keys. A profile is the oldest reader of the fleet (client/fleet.ts), so a
// profile below the work-key change may share Redis with newer readers, which
// look only at `<id>:work`. For such profiles we therefore write the same
// entries to BOTH `<id>:workers` (what the profile's Ruby writes) and
// `<id>:work`, in the same transaction, and clear() unlinks both. Every reader
// reads just its own key (6.4.1 `WorkSet` HGETALLs `:workers`, 6.4.2+/7/8
// `:work`); no reader deletes or scans the other, and both expire in 60 s.
// (Sidekiq moved the key in 6.4.2, where `profile.workKey` switches too.)
import type { ChainableCommander, Redis } from "ioredis";
import type { WireProfile } from "../wire/dialect.js";
import { PROCESSES_KEY, signalsKey } from "../wire/keys.js";
import { execReplies } from "../redis/replies.js";
import { RawJson, toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { nowMs, secondsString } from "../wire/timestamps.js";
import { isConnectionError } from "../redis/availability.js";
import { queueStatCommands, type StatCounts, type ExecutionStats } from "./execution-stats.js";
import {
  launcherShape,
  processInfoJson,
  rssKb,
  totalConcurrency,
  type LauncherShape,
  type ProcessInfoSource,
} from "./process-info.js";
import { actOnRemoteSignal, type RemoteSignal } from "./remote-signals.js";

// Where the launcher, the poller and the worker take them from.
export { newIdentity } from "./process-info.js";
export type { RemoteSignal } from "./remote-signals.js";

/** A job running in this process, as Processor#stats records it in WORK_STATE. */
export interface WorkEntry {
  /** Thread id: the field of the work hash (any short unique string). */
  tid: string;
  queue: string;
  /** The raw job string as fetched (stored double-encoded, byte for byte). */
  payload: string;
  /** When the job started, epoch seconds (integer). */
  runAt: number;
}

export interface HeartbeatLogger {
  error(message: string): void;
  warn(message: string): void;
}

/** What a heartbeat writes and where: its process (`info`), its work, its stats, and who hears its signals. */
export interface HeartbeatOptions extends ProcessInfoSource {
  redis: Redis;
  /** The release whose launcher this heartbeat reproduces (the oldest reader of the fleet). */
  profile: WireProfile;
  /** Dialect "auto": the fleet's oldest reader, asked again before each beat (a rolling deploy changes it). */
  follow?: () => Promise<WireProfile>;
  /** The jobs running now. */
  work: () => Iterable<WorkEntry>;
  stats: ExecutionStats;
  /** Called with a signal a Ruby API/Web UI sent (quiet! = TSTP, stop! = TERM, dump_threads = TTIN). */
  onSignal: (sig: RemoteSignal) => void;
  /** True once the process is quiet or stopping (written as quiet "true"). */
  quiet: () => boolean;
  /** Where failures of the timer-driven beats go (default: console). */
  logger?: HeartbeatLogger;
}

/** The Redis process registry of one Node process, as Sidekiq's Launcher keeps it. */
export class Heartbeat {
  readonly identity: string;
  profile: WireProfile;
  shape: LauncherShape;
  private readonly opts: HeartbeatOptions;
  private readonly log: HeartbeatLogger;
  private infoJson: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private inFlight: Promise<void> | undefined;

  constructor(opts: HeartbeatOptions) {
    this.opts = opts;
    this.identity = opts.identity;
    this.profile = opts.profile;
    this.shape = launcherShape(opts.profile, opts.identity);
    this.log = opts.logger ?? { error: (m) => console.error(m), warn: (m) => console.warn(m) };
  }

  /**
   * Writes `profile`'s launcher from this beat on: once the last process of an
   * older release has left, Ruby's newer readers expect their own shape (8.0.9's
   * `capsules`, 8.1.2's `concurrency` field) and metrics keys (8.0.0).
   */
  useProfile(profile: WireProfile): void {
    if (profile.version === this.profile.version) return;
    this.profile = profile;
    this.shape = launcherShape(profile, this.identity);
    this.infoJson = undefined;
  }

  /** Keys this heartbeat writes. */
  get keys(): { process: string; work: string[]; signals: string } {
    return { process: this.identity, work: this.shape.workKeys, signals: signalsKey(this.identity) };
  }

  get totalConcurrency(): number {
    return totalConcurrency(this.opts.capsules);
  }

  /** Launcher#to_data for the profile, in Ruby's key order (memoized, like `@data ||=`). */
  info(): Record<string, RubyJsonValue> {
    return JSON.parse(this.infoString()) as Record<string, RubyJsonValue>;
  }

  /** Launcher#to_json: the `info` field, dumped once per process. */
  infoString(): string {
    return (this.infoJson ??= processInfoJson(this.profile, this.shape, this.opts));
  }

  /** The work hash values: `{"queue","payload","run_at"}` per tid. */
  private workFields(entries: WorkEntry[]): Array<[string, string]> {
    return entries.map((w) => [
      w.tid,
      toRubyJson({
        queue: w.queue,
        payload: this.shape.payloadString ? w.payload : new RawJson(w.payload),
        run_at: Math.floor(w.runAt),
      }),
    ]);
  }

  private queueWork(tx: ChainableCommander, fields: Array<[string, string]>): void {
    const s = this.shape;
    for (const key of s.workKeys) {
      if (s.unlink) tx.unlink(key);
      else tx.del(key);
      if (s.workMulti) {
        if (fields.length > 0) {
          tx.hset(key, ...fields.flat());
          tx.expire(key, 60);
        }
      } else {
        for (const [tid, json] of fields) tx.hset(key, tid, json);
        tx.expire(key, 60);
      }
    }
  }

  /**
   * One heartbeat: Launcher#❤ of the profile (see the top of this file).
   * Rejects when Redis fails (the counters are kept for the next beat);
   * start() logs such failures and carries on.
   */
  beat(): Promise<void> {
    const run = this.doBeat();
    this.inFlight = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async doBeat(): Promise<void> {
    const { redis, stats } = this.opts;
    if (this.opts.follow) this.useProfile(await this.opts.follow());
    const s = this.shape;
    const key = this.identity;
    const info = this.infoString();
    let counts: StatCounts = { processed: 0, failed: 0 };
    try {
      if (s.flushStats) {
        try {
          await stats.flushCounters(redis);
        } catch (e) {
          // flush_stats rescues and warns; the beat goes on. (We keep the counts.)
          if (!isConnectionError(e)) this.log.warn(`Unable to flush stats: ${errText(e)}`);
        }
      } else {
        counts = stats.takeCounts();
      }

      const entries = [...this.opts.work()];
      const fields = this.workFields(entries);
      const now = Date.now();
      if (s.statsInWorkMulti) {
        const tx = redis.multi();
        queueStatCommands(tx, counts, now);
        this.queueWork(tx, fields);
        execReplies(await tx.exec(), "heartbeat work");
      } else {
        if (s.statsOwnMulti) {
          const tx = redis.multi();
          queueStatCommands(tx, counts, now);
          execReplies(await tx.exec(), "heartbeat stats");
          counts = { processed: 0, failed: 0 };
        }
        const tx = s.workMulti ? redis.multi() : redis.pipeline();
        this.queueWork(tx, fields);
        execReplies(await tx.exec(), "heartbeat work");
      }
      counts = { processed: 0, failed: 0 }; // written: nothing to give back from here on

      let rtt = 0;
      if (s.rtt) {
        const a = process.hrtime.bigint();
        await redis.ping();
        rtt = Number((process.hrtime.bigint() - a) / 1000n);
      }

      const hash: string[] = ["info", info];
      // The hash field is 8.1.2+'s; older readers ignore it, and an 8.1.2+ reader in a
      // mixed fleet shows 0 threads without it, so every profile writes it.
      hash.push("concurrency", String(this.totalConcurrency));
      hash.push("busy", String(entries.length), "beat", secondsString(nowMs()));
      if (s.rtt) hash.push("rtt_us", String(rtt));
      hash.push("quiet", this.opts.quiet() ? "true" : "false");
      if (s.rss) hash.push("rss", String(rssKb()));

      const tx = redis.multi();
      tx.sadd(PROCESSES_KEY, key);
      tx.exists(key);
      if (s.hset) tx.hset(key, ...hash);
      else tx.hmset(key, ...hash);
      tx.expire(key, 60);
      tx.rpop(signalsKey(key));
      const replies = execReplies(await tx.exec(), "heartbeat");
      const signal = replies[4];

      if (s.flushStats) {
        try {
          await stats.flushMetrics(redis, this.profile);
        } catch (e) {
          if (!isConnectionError(e)) this.log.error(`metrics flush: ${errText(e)}`);
        }
      }

      actOnRemoteSignal(signal, {
        identity: key,
        ignore: s.embedded && this.opts.embedded === true,
        onSignal: (sig) => this.opts.onSignal(sig),
        warn: (m) => this.log.warn(m),
      });
    } catch (e) {
      // "don't lose the counts if there was a network issue"
      stats.restoreCounts(counts);
      throw e;
    }
  }

  /** Beats now, then every `profile.beatSeconds`; never throws (failures are logged). */
  start(): Promise<void> {
    if (this.running) return this.inFlight ?? Promise.resolve();
    this.running = true;
    const tick = async () => {
      try {
        await this.beat();
      } catch (e) {
        // An outage is reported once, by whoever watches the connection.
        if (!isConnectionError(e)) this.log.error(`heartbeat: ${errText(e)}`);
      }
      if (!this.running) return;
      this.timer = setTimeout(() => void tick(), this.profile.beatSeconds * 1000);
      this.timer.unref();
    };
    return tick();
  }

  /** Stops the timer and waits for a beat in progress. Does not leave the registry: see clear(). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /**
   * Launcher#clear_heartbeat: flush the stats, then one pipeline of
   * `SREM processes <id>` and `UNLINK <id>:work` (both work keys for a
   * `:workers` profile). The process hash is left to expire (60 s). Best
   * effort, as in Ruby: failures are logged, not thrown. 7.0+ metrics are
   * flushed afterwards (8.x does it on `:exit`; 7.x Ruby drops them).
   * Call stop() first, or the next beat registers the process again.
   * Resolves true when the process left the registry.
   */
  async clear(): Promise<boolean> {
    const { redis, stats } = this.opts;
    let cleared = false;
    await this.inFlight;
    try {
      await stats.flushCounters(redis);
    } catch (e) {
      if (!isConnectionError(e)) this.log.warn(`Unable to flush stats: ${errText(e)}`);
    }
    try {
      const pipe = redis.pipeline();
      pipe.srem(PROCESSES_KEY, this.identity);
      for (const k of this.shape.workKeys) {
        if (this.shape.unlink) pipe.unlink(k);
        else pipe.del(k);
      }
      execReplies(await pipe.exec(), "clear heartbeat");
      cleared = true;
    } catch (e) {
      if (!isConnectionError(e)) this.log.warn(`clear heartbeat: ${errText(e)}`);
    }
    if (this.shape.flushStats) {
      try {
        await stats.flushMetrics(redis, this.profile);
      } catch (e) {
        if (!isConnectionError(e)) this.log.warn(`metrics flush: ${errText(e)}`);
      }
    }
    return cleared;
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
