// A Redis the client pushes to (its own, or one a route names): the
// connection, how long a write on it may wait, and the dialect read from its
// fleet.
import { type ConnectionWatch } from "../redis/availability.js";
import { connectRedis, networkTimeoutFor, type OwnedRedis, type RedisSource } from "../redis/connection.js";
import { warnIfUntimed } from "../redis/network.js";
import type { WireProfile } from "../wire/dialect.js";
import { writeBoundMs } from "./bounded-write.js";

export interface Shard {
  conn: OwnedRedis;
  /** How long one write may wait for its reply (writeBoundMs). */
  writeMs: number;
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
  return { conn, writeMs: writeBoundMs(networkTimeoutFor(source)) };
}

/**
 * A shard of a client made under the testing entry: its connection never
 * opens (nothing is sent on it) and its dialect is fixed, so no fleet is read.
 */
export function recordingShard(source: RedisSource, profile: WireProfile): Shard {
  return { conn: connectRedis(source, true), writeMs: 0, profile: { value: profile, until: Infinity } };
}
