/*
  An add-on poller's claim of one fire time (sidekiq-cron's `:enqueued` ZADD,
  sidekiq-scheduler's `pushed:<name>` ZADD), made exactly as the gem makes it,
  and, only when this ZADD added the member, an in-flight entry naming the
  claiming process in the bridge's claims hash.

  Atomic so that no claim is ever won without its in-flight entry: a process
  killed right after this call leaves an entry that recovery finishes, where
  a bare ZADD would skip that fire time forever.

    Input:
      KEYS[1]   the gem's claim set
      KEYS[2]   the bridge's in-flight claims hash
      ARGV[1]   the claim's score
      ARGV[2]   the claim's member (the gem's format)
      ARGV[3]   the in-flight entry's field
      ARGV[4]   the in-flight entry (JSON naming the owner)
      ARGV[5]   seconds to EXPIRE the claim set with after the ZADD, or "" (none)

    Output:
      1 when this call added the member (the caller owns the fire time), else 0
*/
import { defineScript } from "./define-script.js";

export const claimAddonFireTime = defineScript<
  number,
  readonly [claimSet: string, claims: string],
  readonly [score: string, member: string, field: string, entry: string, expire: string]
>({
  name: "bridgeClaimAddonFireTime",
  lua: `
local added = redis.call("zadd", KEYS[1], ARGV[1], ARGV[2])
if ARGV[5] ~= "" then redis.call("expire", KEYS[1], ARGV[5]) end
if added == 1 then redis.call("hset", KEYS[2], ARGV[3], ARGV[4]) end
return added`,
});
