/*
  The scheduled poller's commit: LPUSHes a popped batch onto its queues (in
  chunks of 1000), SADDs the queues' names, puts the jobs whose preparation
  failed back into the sorted set at `now`, and deletes the promoting set,
  only while the promoting set still holds the batch. Does nothing when a
  queue key holds another type, so that nothing half-applies.

  Atomic because either the jobs are in their queues and the promoting set is
  gone, or neither: a resent commit (after a reconnect) or one that comes
  after recovery took the batch back does nothing.

    Input:
      KEYS[1]     the promoting set
      KEYS[2]     the registry, "bridge:promoting-keys"
      KEYS[3]     the sorted set, "retry" or "schedule"
      KEYS[4]     "queues"
      KEYS[5..]   "queue:<name>", one per queue of the batch

      ARGV[1]     how many jobs were popped (the promoting set's size)
      ARGV[2]     now, epoch seconds as Ruby's Float#to_s writes them
      ARGV[3]     F, how many jobs go back to the sorted set
      ARGV[4..3+F]  those jobs
      then, per queue key in KEYS order: its name, its count, its payloads in push order

    Output:
      the number of jobs pushed
      -1          the promoting set no longer holds the batch (already
                  committed, or taken back by recovery): nothing written
      {i, ...}    the queue keys (1-based among KEYS[5..]) that are not lists:
                  nothing written
*/
import { defineScript } from "./define-script.js";

export const commitPromotedBatch = defineScript<number | number[], readonly string[]>({
  name: "bridgePromoteCommit",
  lua: `
local prom, set = KEYS[1], KEYS[3]
if redis.call("zcard", prom) ~= tonumber(ARGV[1]) then return -1 end
local bad = {}
for k = 5, #KEYS do
  local t = redis.call("type", KEYS[k]).ok
  if t ~= "list" and t ~= "none" then bad[#bad + 1] = k - 4 end
end
if #bad > 0 then return bad end
local step = 1000
local function each(cmd, key, list, from, to)
  for s = from, to, step do redis.call(cmd, key, unpack(list, s, math.min(s + step - 1, to))) end
end
local nfail = tonumber(ARGV[3])
for s = 4, 3 + nfail, step do
  local zargs = {}
  for j = s, math.min(s + step - 1, 3 + nfail) do
    zargs[#zargs + 1] = ARGV[2]
    zargs[#zargs + 1] = ARGV[j]
  end
  redis.call("zadd", set, unpack(zargs))
end
local names, spans, i = {}, {}, 4 + nfail
for k = 5, #KEYS do
  local n = tonumber(ARGV[i + 1])
  names[#names + 1] = ARGV[i]
  spans[#spans + 1] = {i + 2, i + 1 + n}
  i = i + 2 + n
end
local pushed = 0
if #names > 0 then each("sadd", KEYS[4], names, 1, #names) end
for k = 5, #KEYS do
  local span = spans[k - 4]
  each("lpush", KEYS[k], ARGV, span[1], span[2])
  pushed = pushed + span[2] - span[1] + 1
end
redis.call("del", prom)
redis.call("srem", KEYS[2], prom)
return pushed`,
});
