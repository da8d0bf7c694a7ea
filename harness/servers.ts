// The server kind a test run uses: Debian's redis-server (default) or, with
// SIDEKIQ_BRIDGE_SERVER=valkey, Debian trixie's valkey-server. Tests that
// start an extra server use the same kind (the two format scores differently).
import { buildRootfs } from "./local-backend.js";
import { startRedis, type RedisServer, type StartRedisOptions } from "./redis-server.js";

export type ServerKind = "redis" | "valkey";

export function serverKind(): ServerKind {
  const kind = process.env.SIDEKIQ_BRIDGE_SERVER ?? "redis";
  if (kind !== "redis" && kind !== "valkey")
    throw new Error(`SIDEKIQ_BRIDGE_SERVER must be redis or valkey, not "${kind}"`);
  return kind;
}

export function startServer(opts: StartRedisOptions = {}): Promise<RedisServer> {
  return serverKind() === "valkey"
    ? startRedis({ ...opts, root: buildRootfs("valkey"), binary: "valkey-server" })
    : startRedis(opts);
}
