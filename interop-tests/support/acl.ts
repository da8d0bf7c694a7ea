// A Redis (or Valkey) with ACL users, for the tests that run the bridge under
// a user limited to src/core/redis/acl.ts's line; the default user stays whole, for
// the test's own reads and ACL LOG.
import { Redis } from "ioredis";
import { BRIDGE_COMMANDS, bridgeAclRules } from "../../src/core/redis/acl.js";
import type { RedisServer } from "../../harness/redis-server.js";
import { startServer } from "../../harness/servers.js";

export const ACL_PASSWORD = "acl-s3cret";

export interface AclUser {
  name: string;
  /** Rules after the bridge's line: "+client|setname", "-lpush". */
  extra?: string[];
}

export interface AclRedis {
  server: RedisServer;
  /** A user's URL on database `db` (SELECT is sent, so it is checked too). */
  url(user: string, db: number): string;
  /** A default-user connection on `db`: the test's own eyes. */
  admin(db: number): Redis;
  /** ACL LOG's refusals of `user`, as "reason context object" (e.g. "command toplevel keys"), each with its count. */
  denials(user: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** A server whose users run the bridge's ACL line, each with its extra rules. */
export async function startAclRedis(users: AclUser[]): Promise<AclRedis> {
  const config = [
    "user default on nopass ~* &* +@all",
    ...users.map((u) => [`user ${u.name} on >${ACL_PASSWORD} ${bridgeAclRules()}`, ...(u.extra ?? [])].join(" ")),
  ];
  const server = await startServer({ config });
  const admins: Redis[] = [];
  const admin = (db: number) => {
    const r = new Redis(`${server.url}/${db}`);
    admins.push(r);
    return r;
  };
  const log = admin(0);
  return {
    server,
    url: (user, db) => `redis://${user}:${ACL_PASSWORD}@127.0.0.1:${server.port}/${db}`,
    admin,
    async denials(user) {
      const entries = (await log.call("acl", "log", "1000")) as Array<Array<string | number>>;
      return entries.flatMap((e) => {
        const f = new Map<string, string | number>();
        for (let i = 0; i + 1 < e.length; i += 2) f.set(String(e[i]), e[i + 1]!);
        if (f.get("username") !== user) return [];
        return [`${f.get("reason")} ${f.get("context")} ${f.get("object")} (x${f.get("count")})`];
      });
    },
    async stop() {
      for (const r of admins) r.disconnect();
      await server.stop();
    },
  };
}

/** Rules that take commands away from the bridge's line (a user that lacks them). */
export const without = (...commands: string[]): string[] => {
  for (const c of commands) if (!BRIDGE_COMMANDS.includes(c)) throw new Error(`${c} is not on the bridge's line`);
  return commands.map((c) => `-${c}`);
};
