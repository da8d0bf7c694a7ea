/*
  Rewrites sorted-set members in place (a migration of retry, schedule or
  dead), keeping each one's score: for each (old, new), if `old` is still a
  member and `new` is not, ZREM old and ZADD new with old's score.

  Atomic because pollers and the API remove members meanwhile: a member gone
  since it was read must stay gone, and a job must never be in the set twice
  nor missing.

    Input:
      KEYS[1]     the sorted set
      ARGV[1..]   pairs: old, new

    Output:
      one status per pair: 1 replaced, 0 gone, 2 conflict (`new` already a
      member: merging them would lose a job)
*/
import { defineScript } from "./define-script.js";

export const replaceSortedSetMembers = defineScript<
  number[],
  readonly [sortedSet: string],
  ReadonlyArray<string | number | Buffer>
>({
  name: "bridgeMigZsetReplace",
  lua: `
local key = KEYS[1]
local out = {}
for i = 1, #ARGV, 2 do
  local score = redis.call("ZSCORE", key, ARGV[i])
  if not score then
    out[#out + 1] = 0
  elseif redis.call("ZSCORE", key, ARGV[i + 1]) then
    out[#out + 1] = 2
  else
    redis.call("ZREM", key, ARGV[i])
    redis.call("ZADD", key, score, ARGV[i + 1])
    out[#out + 1] = 1
  end
end
return out`,
});
