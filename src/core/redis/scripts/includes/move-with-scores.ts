/*
  move(src, dst, flat): moves members to another sorted set, each with its
  own score. `flat` is a ZRANGE ... WITHSCORES reply (member, score, ...);
  every member is added to dst and removed from src, in chunks of 500
  (Lua's unpack is limited to a few thousand values).

  Included by: pop-due-into-promoting-set, restore-promoting-set.
*/
import type { LuaInclude } from "../define-script.js";

export const moveWithScores: LuaInclude = {
  name: "move-with-scores",
  lua: `
local function move(src, dst, flat)
  local step = 1000
  for i = 1, #flat, step do
    local zargs, members = {}, {}
    for j = i, math.min(i + step - 1, #flat), 2 do
      zargs[#zargs + 1] = flat[j + 1]
      zargs[#zargs + 1] = flat[j]
      members[#members + 1] = flat[j]
    end
    redis.call("zadd", dst, unpack(zargs))
    redis.call("zrem", src, unpack(members))
  end
end`,
};
