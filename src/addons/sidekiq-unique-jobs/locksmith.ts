// The gem's Locksmith: takes, waits for and releases one job's lock with the
// gem's own scripts. Gem 8 keeps `<digest>`, `:QUEUED`, `:PRIMED`, `:LOCKED`,
// `:INFO` and a changelog; gem 9 only `<digest>:LOCKED` (jid => metadata).
import type { Redis } from "ioredis";
import { nowSecondsF } from "../../core/wire/timestamps.js";
import { injected, runScript, type ScriptArg } from "./scripts.js";
import type { UniqueJobsConfig } from "./config.js";
import type { LockConfig } from "./lock-config.js";
import { V8_LOCK, V8_QUEUE, V8_QUEUE_AND_LOCK, V8_UNLOCK } from "./lua-v8.js";
import { V9_LOCK, V9_UNLOCK } from "./lua-v9.js";
import { toRubyJson, type RubyJsonValue } from "../../core/wire/ruby-json.js";

export const DIGESTS = "uniquejobs:digests";
export const CHANGELOG = "uniquejobs:changelog";
export const EXPIRING_DIGESTS = "uniquejobs:expiring_digests";

/** Locksmith::MAX_BLOCKING_WAIT: the longest the gem blocks for a primed lock. */
const MAX_BLOCKING_WAIT = 5;
const POLL_MS = 25;

export interface Locksmith {
  /** The client's non-blocking lock (gem 8: queue_and_lock.lua); true when this job holds it. */
  lock(): Promise<boolean>;
  /** `lock(wait: 0)`: take the lock back after a failure, waiting up to a second. */
  relock(): Promise<boolean>;
  /** Runs fn holding the lock (taking it if needed); false when the lock could not be had (fn not run). */
  execute(fn: () => Promise<void>): Promise<boolean>;
  /** The jid unlock.lua reports, or null when another job holds the lock. */
  unlock(): Promise<string | null>;
  locked(): Promise<boolean>;
}

export function locksmith(redis: Redis, lc: LockConfig, cfg: UniqueJobsConfig): Locksmith {
  return cfg.gem === 9 ? new LocksmithV9(redis, lc, cfg) : new LocksmithV8(redis, lc, cfg);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function lockInfoJson(lc: LockConfig): string {
  const g = (k: string) => (lc.get(k) ?? null) as RubyJsonValue;
  return toRubyJson({
    worker: lc.className,
    queue: lc.queue,
    limit: g("lock_limit"),
    timeout: g("lock_timeout"),
    ttl: g("lock_ttl"),
    type: lc.type,
    lock_args: g("lock_args"),
    time: nowSecondsF(),
    at: g("at"),
  });
}

class LocksmithV8 implements Locksmith {
  private syncLocked = false;
  private readonly keys: string[];

  constructor(
    private readonly redis: Redis,
    private readonly lc: LockConfig,
    private readonly cfg: UniqueJobsConfig,
  ) {
    const d = lc.digest;
    this.keys = [d, `${d}:QUEUED`, `${d}:PRIMED`, `${d}:LOCKED`, `${d}:INFO`, CHANGELOG, DIGESTS, EXPIRING_DIGESTS];
  }

  private argv(): ScriptArg[] {
    return [this.lc.jid, this.lc.pttl, this.lc.type, this.lc.limit, this.lc.lockScore];
  }

  private call(lua: string, name: string, extra: ScriptArg[] = []): Promise<unknown> {
    return runScript(this.redis, lua, this.keys, [...this.argv(), ...extra, ...injected(name, this.cfg.maxHistory)]);
  }

  /** The gem drops a lock taken after its TTL (less clock drift) had already run out. */
  private valid(elapsed: number): boolean {
    const pttl = this.lc.pttl;
    return pttl === 0 || pttl - elapsed - (pttl + 2) * 0.01 >= 0;
  }

  private async writeLockInfo(): Promise<void> {
    if (this.lc.lockInfo) await this.redis.set(`${this.lc.digest}:INFO`, lockInfoJson(this.lc));
  }

  async lock(): Promise<boolean> {
    const t0 = performance.now();
    const jid = await this.call(V8_QUEUE_AND_LOCK, "queue_and_lock");
    if (jid !== this.lc.jid || !this.valid(performance.now() - t0)) return false;
    this.syncLocked = true;
    await this.writeLockInfo();
    return true;
  }

  relock(): Promise<boolean> {
    return this.lockAsync(0);
  }

  async execute(fn: () => Promise<void>): Promise<boolean> {
    if (!(await this.lockAsync(null))) return false;
    await fn();
    return true;
  }

  /** Locksmith#lock! on the primed_async path: queue.lua, wait for the primed jid, lock.lua. */
  private async lockAsync(wait: number | null): Promise<boolean> {
    if (await this.locked()) return true;
    const t0 = performance.now();
    const queued = await this.call(V8_QUEUE, "queue");
    if (queued !== this.lc.jid && queued !== "1") return false;
    if (!this.valid(performance.now() - t0)) return false;
    await this.writeLockInfo();
    let timeout = Math.trunc(wait ?? this.lc.timeout ?? 0);
    if (timeout === 0) timeout = 1;
    const primed = await this.popQueued(Math.min(timeout, MAX_BLOCKING_WAIT));
    if (primed !== this.lc.jid && primed !== "1") return false;
    const locked = await this.call(V8_LOCK, "lock");
    return Boolean(locked);
  }

  /**
   * The gem's BLMOVE queued→primed with a timeout, as non-blocking LMOVEs so
   * a wait never holds up the shared connection; each move is as atomic.
   */
  private async popQueued(seconds: number): Promise<string | null> {
    const deadline = Date.now() + seconds * 1000;
    for (;;) {
      const v = await this.redis.lmove(this.keys[1]!, this.keys[2]!, "RIGHT", "LEFT");
      if (v !== null || Date.now() >= deadline) return v;
      await sleep(POLL_MS);
    }
  }

  async unlock(): Promise<string | null> {
    const r = await this.call(V8_UNLOCK, "unlock", [this.syncLocked ? 1 : 0]);
    return typeof r === "string" ? r : null;
  }

  async locked(): Promise<boolean> {
    return (await this.redis.hexists(`${this.lc.digest}:LOCKED`, this.lc.jid)) === 1;
  }
}

class LocksmithV9 implements Locksmith {
  private readonly keys: string[];

  constructor(
    private readonly redis: Redis,
    private readonly lc: LockConfig,
    private readonly cfg: UniqueJobsConfig,
  ) {
    this.keys = [`${lc.digest}:LOCKED`, DIGESTS];
  }

  async lock(): Promise<boolean> {
    const lc = this.lc;
    const argv = [lc.jid, lc.pttl, lc.type, lc.limit, lockInfoJson(lc), ...injected("lock", this.cfg.maxHistory)];
    return (await runScript(this.redis, V9_LOCK, this.keys, argv)) !== null;
  }

  relock(): Promise<boolean> {
    return this.lock();
  }

  async execute(fn: () => Promise<void>): Promise<boolean> {
    if (!(await this.lock())) return false;
    await fn();
    return true;
  }

  async unlock(): Promise<string | null> {
    const argv = [this.lc.jid, this.lc.type, ...injected("unlock", this.cfg.maxHistory)];
    const r = await runScript(this.redis, V9_UNLOCK, this.keys, argv);
    return typeof r === "string" ? r : null;
  }

  async locked(): Promise<boolean> {
    return (await this.redis.hexists(this.keys[0]!, this.lc.jid)) === 1;
  }
}
