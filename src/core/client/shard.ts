// The Redis a client pushes to (its own, or one a route names), by queue:
// each one's connection, how long a write on it may wait, and the dialect
// read from its fleet. Opened on first use, closed together; Client (client.ts)
// only asks where a queue's push goes and in what dialect.
import { awaitsConnection, closeConnection, ConnectionWatch, explained, whenReady } from "../redis/availability.js";
import { connectRedis, networkTimeoutFor, type OwnedRedis, type RedisSource } from "../redis/connection.js";
import { warnIfUntimed } from "../redis/network.js";
import { DIALECTS, profileFor, type WireProfile } from "../wire/dialect.js";
import { WriteDeadlines, writeBoundMs } from "./bounded-write.js";
import type { ClientOptions } from "./client-options.js";
import { DialectDetectionError, NO_FLEET_TO_DETECT } from "./errors.js";
import { liveProcesses, profileForFleet } from "./fleet.js";

export interface Shard {
  conn: OwnedRedis;
  /** The deadlines of the writes in flight on `conn` (each may wait `deadlines.ms`, writeBoundMs): one timer for all of them. */
  deadlines: WriteDeadlines;
  profile?: { value: WireProfile; until: number };
}

/**
 * Opens (or adopts) the connection. Ours are watched, so an outage is
 * reported once; an instance passed in is used as it is, with a warning when
 * nothing bounds its silence (its pushes are still bounded).
 */
export function openShard(source: RedisSource, watch: ConnectionWatch, warn: (m: string) => void): Shard {
  const conn = connectRedis(source);
  if (conn.owned) watch.add(conn.redis);
  else warnIfUntimed(conn.redis, warn);
  return { conn, deadlines: new WriteDeadlines(writeBoundMs(networkTimeoutFor(source))) };
}

/**
 * A shard of a client made under the testing entry: its connection never
 * opens (nothing is sent on it) and its dialect is fixed, so no fleet is read.
 */
export function recordingShard(source: RedisSource, profile: WireProfile): Shard {
  const conn = connectRedis(source, true);
  return { conn, deadlines: new WriteDeadlines(0), profile: { value: profile, until: Infinity } };
}

/** A client's shards: `redis` for every queue, or what `route` names, each opened once. */
export class Shards {
  private readonly routed = new Map<RedisSource, Shard>();
  private readonly watch: ConnectionWatch;
  private defaultShard!: Shard;
  /** The dialect given (not "auto"), resolved once. */
  readonly fixedProfile?: WireProfile;

  /**
   * Resolves a fixed dialect (a typo fails here, not at the first push) but
   * opens nothing until `open()`. `recording`: the testing entry takes the
   * pushes, so no connection opens and no fleet is read.
   */
  constructor(
    private readonly options: ClientOptions,
    private readonly warn: (m: string) => void,
    private readonly recording: boolean,
  ) {
    this.watch = new ConnectionWatch({ lost: warn, back: warn });
    if (options.dialect !== undefined && options.dialect !== "auto") this.fixedProfile = profileFor(options.dialect);
  }

  /** Opens the default shard: last in Client's constructor, so options that throw leave no connection open. */
  open(): void {
    this.defaultShard = this.connect(this.options.redis);
  }

  shardFor(queue: string): Shard {
    if (!this.options.route) return this.defaultShard;
    const source = this.options.route(queue);
    if (source === this.options.redis) return this.defaultShard;
    let shard = this.routed.get(source);
    if (!shard) this.routed.set(source, (shard = this.connect(source)));
    return shard;
  }

  private connect(source: RedisSource): Shard {
    if (!this.recording) return openShard(source, this.watch, this.warn);
    // Under the testing entry: the dialect given, else the fallback, else the newest; no fleet to ask.
    const o = this.options;
    const profile = this.fixedProfile ?? profileFor(o.autoFallback ?? DIALECTS[DIALECTS.length - 1]!);
    return recordingShard(source, profile);
  }

  /** Waits (bounded) for the shard's Redis, then runs `op`; connection failures become one clear error. */
  reachable<T>(shard: Shard, op: () => Promise<T>): Promise<T> {
    const redis = shard.conn.redis;
    // Ready, as on nearly every push: no wait to allocate.
    if (!awaitsConnection(redis)) return explained(redis, op);
    return whenReady(redis, this.options.connectWaitMs ?? 5000).then(() => explained(redis, op));
  }

  /** The wire profile written to a shard: the fixed one, or "auto" resolved against its fleet (cached autoRefreshMs). */
  async profileOf(shard: Shard): Promise<WireProfile> {
    if (this.fixedProfile) return this.fixedProfile;
    const now = Date.now();
    if (shard.profile && shard.profile.until > now) return shard.profile.value;
    const fleet = await liveProcesses(shard.conn.redis);
    let value = profileForFleet(fleet);
    if (!value) {
      if (this.options.autoFallback === undefined) {
        throw new DialectDetectionError(NO_FLEET_TO_DETECT);
      }
      value = profileFor(this.options.autoFallback);
    }
    shard.profile = { value, until: now + (this.options.autoRefreshMs ?? 30_000) };
    return value;
  }

  /** Closes the connections opened here (not an ioredis instance passed in). */
  async close(): Promise<void> {
    const all = [this.defaultShard, ...this.routed.values()];
    this.watch.mute();
    await Promise.all(all.filter((s) => s.conn.owned).map((s) => closeConnection(s.conn.redis)));
  }
}
