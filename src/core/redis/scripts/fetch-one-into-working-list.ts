/*
  Reliable fetch of one job: tries the queues in order and moves the first job
  found (RPOPLPUSH) from its queue into this process's working list for it.

  A script because BRPOPLPUSH blocks on one queue only, and trying the queues
  from Node would cost a round trip each: inside it the order is exact (no
  job can arrive in an earlier queue between two tries), and each move is an
  RPOPLPUSH, so a job is always in its queue or in the working list.

    Input:
      KEYS[1..n]      the queues, "queue:<name>", in fetch order
      KEYS[n+1..2n]   their working lists, "bridge:wip:<identity>|queue:<name>"
                      (KEYS[n+i] is the working list of KEYS[i])

    Output:
      {queue, job}    the queue's key and the job's raw bytes
      false (nil)     every queue was empty
*/
import { defineScript } from "./define-script.js";

export const fetchOneIntoWorkingList = defineScript<[queue: Buffer, job: Buffer] | null, readonly string[], []>({
  name: "bridgeMoveFirst",
  replies: "buffer",
  lua: `
local n = #KEYS / 2
for i = 1, n do
  local job = redis.call("rpoplpush", KEYS[i], KEYS[n + i])
  if job then return {KEYS[i], job} end
end
return false`,
});
