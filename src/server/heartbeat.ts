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
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname as osHostname } from "node:os";
import type { ChainableCommander, Redis } from "ioredis";
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import type { WireProfile } from "../wire/dialect.js";
import { type LauncherRules, releaseRules } from "../wire/release-rules.js";
import { execReplies } from "../redis/replies.js";
import { RawJson, RubyFloat, toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { nowMs, secondsString } from "../wire/timestamps.js";
import { isConnectionError } from "../redis/availability.js";
import { queueStatCommands, type StatCounts, type Stats } from "./execution-stats.js";

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

export type RemoteSignal = "TSTP" | "TERM" | "TTIN";
const SIGNALS: readonly string[] = ["TSTP", "TERM", "TTIN"];

export interface CapsuleInfo {
  name: string;
  concurrency: number;
  mode: "strict" | "weighted" | "random";
  /** queue => weight (0 in strict mode); key order is the queue order. */
  weights: Record<string, number>;
}

export interface HeartbeatLogger {
  error(message: string): void;
  warn(message: string): void;
}

export interface HeartbeatOptions {
  redis: Redis;
  /** The release whose launcher this heartbeat reproduces (the oldest reader of the fleet). */
  profile: WireProfile;
  /** `newIdentity()`; the Redis key of the process hash. */
  identity: string;
  /** `tag` option, "" by default (the Web UI shows it beside the hostname). */
  tag?: string;
  /** Extra labels; BRIDGE_LABEL is always added. */
  labels?: string[];
  capsules: CapsuleInfo[];
  /** Sidekiq 7.0.3+ "embedded": the UI hides Quiet/Stop, and popped signals are ignored. */
  embedded?: boolean;
  /** The jobs running now. */
  work: () => Iterable<WorkEntry>;
  stats: Stats;
  /** Called with a signal a Ruby API/Web UI sent (quiet! = TSTP, stop! = TERM, dump_threads = TTIN). */
  onSignal: (sig: RemoteSignal) => void;
  /** Process start, epoch ms (default: the first beat, as Ruby's memoized to_data). */
  startedAt?: number;
  /** True once the process is quiet or stopping (written as quiet "true"). */
  quiet: () => boolean;
  /** info.hostname; default: the hostname part of `identity`, else DYNO or os.hostname(). */
  hostname?: string;
  /** Where failures of the timer-driven beats go (default: console). */
  logger?: HeartbeatLogger;
}

/** `ENV["DYNO"] || Socket.gethostname`. */
export function defaultHostname(): string {
  return process.env.DYNO || osHostname();
}

/** `"#{hostname}:#{pid}:#{SecureRandom.hex(6)}"` (component.rb / util.rb). */
export function newIdentity(hostname: string = defaultHostname()): string {
  return `${hostname}:${process.pid}:${randomBytes(6).toString("hex")}`;
}

/** This package's version, for `info.version`. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "0";
  } catch {
    return "0";
  }
}

/**
 * `info.version` of a Node process: the emulated release, then who we are, e.g.
 * `8.1.7-sidekiq-bridge.0.1.0`. Ruby only compares it with `!=` and prints it
 * (busy.erb, monitor.rb), so a human sees it on the Busy page; it still starts
 * with the release (the v6/v7/v8 schemas and profileForVersion read that) and
 * is a valid Gem::Version (a pre-release of that release) for any tool that
 * parses it.
 */
export function bridgeVersionString(profile: WireProfile): string {
  return `${profile.version}-sidekiq-bridge.${packageVersion()}`;
}

/** Resident set size in KB: VmRSS of /proc/self/status (Ruby's MEMORY_GRABBER on Linux). */
export function rssKb(): number {
  try {
    const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]);
  } catch {
    // not Linux: fall through
  }
  return Math.round(process.memoryUsage.rss() / 1024);
}

/**
 * How this process's Launcher#❤ and #to_data look: the `launcher` rules of the
 * profile's release (wire/release-rules.ts says what changed when), and the
 * work keys to write.
 */
export interface LauncherShape extends LauncherRules {
  /** `<id>:work`, and `<id>:workers` first for a profile before 6.4.2 (see above). */
  workKeys: string[];
}

export function launcherShape(profile: WireProfile, identity: string): LauncherShape {
  const workKeys = profile.workKey === "workers" ? [`${identity}:workers`, `${identity}:work`] : [`${identity}:work`];
  return { ...releaseRules(profile).launcher, workKeys };
}

/** The Redis process registry of one Node process, as Sidekiq's Launcher keeps it. */
export class Heartbeat {
  readonly identity: string;
  readonly profile: WireProfile;
  readonly shape: LauncherShape;
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

  /** Keys this heartbeat writes. */
  get keys(): { process: string; work: string[]; signals: string } {
    return { process: this.identity, work: this.shape.workKeys, signals: `${this.identity}-signals` };
  }

  get totalConcurrency(): number {
    return this.opts.capsules.reduce((n, c) => n + c.concurrency, 0);
  }

  /** Launcher#to_data for the profile, in Ruby's key order (memoized, like `@data ||=`). */
  info(): Record<string, RubyJsonValue> {
    return JSON.parse(this.infoString()) as Record<string, RubyJsonValue>;
  }

  /** Launcher#to_json: the `info` field, dumped once per process. */
  infoString(): string {
    if (this.infoJson !== undefined) return this.infoJson;
    const o = this.opts;
    const s = this.shape;
    const caps = o.capsules;
    const queues = [...new Set(caps.flatMap((c) => Object.keys(c.weights)))];
    const labels = [...new Set([...(o.labels ?? []), BRIDGE_LABEL])];
    const data: Record<string, RubyJsonValue> = {
      hostname: o.hostname ?? hostnameOf(o.identity),
      started_at: new RubyFloat((o.startedAt ?? nowMs()) / 1000),
      pid: process.pid,
      tag: o.tag ?? "",
    };
    if (!s.concurrencyField) data.concurrency = this.totalConcurrency;
    if (s.capsules) {
      const capsules: Record<string, RubyJsonValue> = {};
      for (const c of caps) capsules[c.name] = { concurrency: c.concurrency, mode: c.mode, weights: { ...c.weights } };
      data.capsules = capsules;
    }
    data.queues = queues;
    if (s.weights === "per-capsule") data.weights = caps.map((c) => ({ ...c.weights }));
    else if (s.weights === "tally") {
      // 7.0.2: capsules.flat_map(&:queues).tally, where a queue appears max(weight, 1) times.
      const tally: Record<string, number> = {};
      for (const c of caps) for (const [q, w] of Object.entries(c.weights)) tally[q] = (tally[q] ?? 0) + Math.max(w, 1);
      data.weights = tally;
    }
    data.labels = labels;
    data.identity = o.identity;
    // 6.x writes no version (7.0.2+ does); ours goes in every profile, where 7+
    // writes it, so a 6.5+/7/8 UI reading a 6-profile heartbeat still shows it.
    data.version = bridgeVersionString(this.profile);
    if (s.embedded) data.embedded = o.embedded ?? false;
    this.infoJson = toRubyJson(data);
    return this.infoJson;
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
      tx.sadd("processes", key);
      tx.exists(key);
      if (s.hset) tx.hset(key, ...hash);
      else tx.hmset(key, ...hash);
      tx.expire(key, 60);
      tx.rpop(`${key}-signals`);
      const replies = execReplies(await tx.exec(), "heartbeat");
      const signal = replies[4];

      if (s.flushStats) {
        try {
          await stats.flushMetrics(redis, this.profile);
        } catch (e) {
          if (!isConnectionError(e)) this.log.error(`metrics flush: ${errText(e)}`);
        }
      }

      if (typeof signal === "string") {
        if (s.embedded && this.opts.embedded) {
          // Ruby: Process.kill(signal, pid) if signal && !@embedded
        } else if (SIGNALS.includes(signal)) {
          this.opts.onSignal(signal as RemoteSignal);
        } else {
          this.log.warn(`heartbeat: ignoring unknown signal ${JSON.stringify(signal)} from ${key}-signals`);
        }
      }
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
      pipe.srem("processes", this.identity);
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

/** The hostname part of `hostname:pid:hex12`, else DYNO / os.hostname(). */
function hostnameOf(identity: string): string {
  const m = /^(.*):\d+:[0-9a-f]{12}$/.exec(identity);
  return m?.[1] || defaultHostname();
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
