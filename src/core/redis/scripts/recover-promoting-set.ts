/*
  Puts a promoting set (a batch the scheduled poller popped and did not push)
  back into its sorted set, every job at the score it had there, as if never
  popped, and removes the promoting set from the registry.

  Atomic because a job must be in the sorted set or in the promoting set at
  every moment, and the registry must list every promoting set that holds jobs.

    Input:
      KEYS[1]   the promoting set, "bridge:promoting:<identity>|<retry or schedule>"
      KEYS[2]   the sorted set, "retry" or "schedule"
      KEYS[3]   the registry, "bridge:promoting-keys"

    Output:
      how many jobs moved
*/
import { defineScript } from "./define-script.js";
import { moveWithScores } from "./includes/move-with-scores.js";

export const recoverPromotingSet = defineScript<
  number,
  readonly [promoting: string, sortedSet: string, registry: string],
  readonly []
>({
  name: "bridgeRestorePromoting",
  includes: [moveWithScores],
  lua: `
local flat = redis.call("zrange", KEYS[1], 0, -1, "withscores")
move(KEYS[1], KEYS[2], flat)
redis.call("srem", KEYS[3], KEYS[1])
return #flat / 2`,
});
