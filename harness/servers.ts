// The server a test run uses (SIDEKIQ_BRIDGE_SERVER): Debian's redis-server on
// this machine (default, bookworm's Redis 7.0), or one run from its own root
// filesystem: trixie's Valkey 8.1 ("valkey"), forky's Valkey 9.1 ("valkey9")
// or forky's Redis 8.0 ("redis8"). Tests that start an extra server use the
// same kind (the two families format scores differently).
import { buildRootfs } from "./local-backend.js";
import { startRedis, type RedisServer, type StartRedisOptions } from "./redis-server.js";

const KINDS = {
  redis: undefined,
  valkey: { root: "valkey", binary: "valkey-server" },
  valkey9: { root: "valkey9", binary: "valkey-server" },
  redis8: { root: "redis8", binary: "redis-server" },
} as const;

export type ServerKind = keyof typeof KINDS;

export function serverKind(): ServerKind {
  const kind = process.env.SIDEKIQ_BRIDGE_SERVER ?? "redis";
  if (!Object.hasOwn(KINDS, kind))
    throw new Error(`SIDEKIQ_BRIDGE_SERVER must be one of ${Object.keys(KINDS).join(", ")}, not "${kind}"`);
  return kind as ServerKind;
}

/** Redis 7.2 and later, and every Valkey, know CLIENT SETINFO (Ruby's redis-client sends it); bookworm's Redis 7.0 does not. */
export function serverKnowsClientSetinfo(kind: ServerKind = serverKind()): boolean {
  return kind !== "redis";
}

export function startServer(opts: StartRedisOptions = {}): Promise<RedisServer> {
  const k = KINDS[serverKind()];
  return k ? startRedis({ ...opts, root: buildRootfs(k.root), binary: k.binary }) : startRedis(opts);
}
