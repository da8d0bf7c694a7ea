/*
  One batch of a bulk action on a sorted job set (retry, schedule or dead):
  each entry is ZREMed from the set and, only if this call removed it, written
  to its destination:

    "push"    LPUSH the prepared payload onto its queue (SADD queues once per
              queue that received a job): retry and add to queue; the
              payloads of one queue go in one LPUSH (chunks of 500), which
              leaves the list as one LPUSH each in order would
    "kill"    ZADD dead <now> <the member, bytes unchanged>, then DeadSet#trim:
              ZREMRANGEBYSCORE dead -inf <cutoff>; ZREMRANGEBYRANK dead 0 -<max>
    "delete"  nothing more
    "clear"   the whole set: ZCARD and UNLINK (Ruby's clear), no members;
              a script, not a MULTI, because Redis at maxmemory refuses
              every command queued in a MULTI but runs a script that only
              deletes

  Atomic because workers, pollers, other API callers and Ruby's Web UI take
  members meanwhile, and because the process running the action may die
  between any two calls: an entry is in its set or in its destination, never
  both and never neither, and one another actor took is left alone.

    Input:
      KEYS[1]     the sorted set
      KEYS[2]     "queues"
      KEYS[3]     "dead"
      KEYS[4..]   the queues pushed to, "queue:<name>"
      ARGV[1]     "push" | "kill" | "delete" | "clear"
      push:       ARGV[2..] triples: member, index in KEYS of its queue, payload
      kill:       ARGV[2] the score (now), ARGV[3] the trim's cutoff score,
                  ARGV[4] the trim's rank (-max), ARGV[5..] members
      delete:     ARGV[2..] members

    Output:
      one status per entry, in order: 1 moved, 0 gone (no longer in the set);
      clear: { the number of entries deleted }
*/
import { defineScript } from "./define-script.js";

export const moveSetEntries = defineScript<
  number[],
  readonly [sortedSet: string, queues: string, dead: string, ...queueKeys: string[]],
  ReadonlyArray<string | number | Buffer>
>({
  name: "bridgeBulkMoveSetEntries",
  lua: `
local set, queues, dead = KEYS[1], KEYS[2], KEYS[3]
local mode = ARGV[1]
local out = {}
if mode == "push" then
  -- Payloads gathered per queue, then one LPUSH per queue and chunk: the
  -- same list as an LPUSH each, in order, for fewer calls into Redis.
  local byKey, order = {}, {}
  for i = 2, #ARGV, 3 do
    if redis.call("ZREM", set, ARGV[i]) == 1 then
      local k = tonumber(ARGV[i + 1])
      if not byKey[k] then
        byKey[k] = {}
        order[#order + 1] = k
      end
      local list = byKey[k]
      list[#list + 1] = ARGV[i + 2]
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
  end
  for _, k in ipairs(order) do
    local key, list = KEYS[k], byKey[k]
    redis.call("SADD", queues, string.sub(key, 7))
    for j = 1, #list, 500 do
      redis.call("LPUSH", key, unpack(list, j, math.min(j + 499, #list)))
    end
  end
elseif mode == "kill" then
  local any = false
  for i = 5, #ARGV do
    if redis.call("ZREM", set, ARGV[i]) == 1 then
      redis.call("ZADD", dead, ARGV[2], ARGV[i])
      any = true
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
  end
  if any then
    redis.call("ZREMRANGEBYSCORE", dead, "-inf", ARGV[3])
    redis.call("ZREMRANGEBYRANK", dead, 0, tonumber(ARGV[4]))
  end
elseif mode == "delete" then
  for i = 2, #ARGV do
    out[#out + 1] = redis.call("ZREM", set, ARGV[i])
  end
elseif mode == "clear" then
  out[1] = redis.call("ZCARD", set)
  redis.call("UNLINK", set)
else
  return redis.error_reply("unknown bulk mode " .. tostring(mode))
end
return out`,
});
