/*
  Recovery of a dead process's working list: moves every job in it back to its
  queue's BRPOP end (they run next) and, when any moved,
  registers the queue in `queues` as a push would.

  Atomic because the working list is emptied and the queue filled in one
  step: a crash half-way cannot lose a job nor leave one in both lists.

    Input:
      KEYS[1]   the working list, "bridge:wip:<identity>|queue:<name>"
      KEYS[2]   its queue, "queue:<name>"
      KEYS[3]   "queues"
      ARGV[1]   the queue's name

    Output:
      how many jobs moved
*/
import { defineScript } from "./define-script.js";

export const recoverWorkingList = defineScript<
  number,
  readonly [workingList: string, queue: string, queues: string],
  readonly [queueName: string]
>({
  name: "bridgeRestoreWip",
  lua: `
local n = 0
while true do
  local job = redis.call("rpop", KEYS[1])
  if not job then break end
  redis.call("rpush", KEYS[2], job)
  n = n + 1
end
if n > 0 then redis.call("sadd", KEYS[3], ARGV[1]) end
return n`,
});
