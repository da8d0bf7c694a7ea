/*
  Recovery of a dead process's working hash (the jobs its batch fetches took):
  moves every job in it back to its queue's BRPOP end, the first fetched
  (lowest field number) last, so it runs first, deletes the hash and, when
  any moved, registers the queue in `queues` as a push would.

  Atomic because the working hash is emptied and the queue filled in one
  step: a crash half-way cannot lose a job nor leave one in both.

    Input:
      KEYS[1]   the working hash, "bridge:working:<identity>|queue:<name>"
      KEYS[2]   its queue, "queue:<name>"
      KEYS[3]   "queues"
      ARGV[1]   the queue's name

    Output:
      how many jobs moved
*/
import { defineScript } from "./define-script.js";

export const recoverWorkingHash = defineScript<
  number,
  readonly [workingHash: string, queue: string, queues: string],
  readonly [queueName: string]
>({
  name: "bridgeRestoreWorkingHash",
  lua: `
local flat = redis.call("hgetall", KEYS[1])
local entries = {}
for i = 1, #flat, 2 do
  entries[#entries + 1] = {tonumber(flat[i]) or 0, flat[i + 1]}
end
table.sort(entries, function(a, b) return a[1] > b[1] end)
for _, e in ipairs(entries) do redis.call("rpush", KEYS[2], e[2]) end
redis.call("del", KEYS[1])
if #entries > 0 then redis.call("sadd", KEYS[3], ARGV[1]) end
return #entries`,
});
