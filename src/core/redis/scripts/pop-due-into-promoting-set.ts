/*
  The scheduled poller's pop: moves up to ARGV[2] jobs due by ARGV[1] from
  `retry` or `schedule`, with their scores, into this process's promoting set,
  and registers that set. A batch still in the promoting set (its push and its
  put-back both failed) goes back to the sorted set first. Uses ZRANGEBYSCORE,
  so Redis older than 6.2 works too.

  Atomic because a job must be in the sorted set or in the promoting set at
  every moment, and two pollers must never pop the same job.

    Input:
      KEYS[1]   the sorted set, "retry" or "schedule"
      KEYS[2]   this process's promoting set, "bridge:promoting:<identity>|<set>"
      KEYS[3]   the registry, "bridge:promoting-keys"
      ARGV[1]   now, epoch seconds as Ruby's Float#to_s writes them
      ARGV[2]   the batch size

    Output:
      the popped jobs, in score order (empty when none is due)
*/
import { defineScript } from "./define-script.js";
import { moveWithScores } from "./includes/move-with-scores.js";

export const popDueIntoPromotingSet = defineScript<
  string[],
  readonly [sortedSet: string, promoting: string, registry: string],
  readonly [now: string, batchSize: number]
>({
  name: "bridgePromotePop",
  includes: [moveWithScores],
  lua: `
local set, prom = KEYS[1], KEYS[2]
if redis.call("exists", prom) == 1 then
  move(prom, set, redis.call("zrange", prom, 0, -1, "withscores"))
end
local due = redis.call("zrangebyscore", set, "-inf", ARGV[1], "withscores", "limit", 0, tonumber(ARGV[2]))
if #due == 0 then return {} end
move(set, prom, due)
redis.call("sadd", KEYS[3], prom)
local jobs = {}
for i = 1, #due, 2 do jobs[#jobs + 1] = due[i] end
return jobs`,
});
