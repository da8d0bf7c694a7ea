/*
  Puts jobs from this process's working lists back on their queues (requeue at
  shutdown, hand back to another process): each job goes back only if the LREM
  found it in its working list.

  Atomic because ioredis resends an unanswered command after a reconnect: a
  plain LREM + RPUSH run twice would queue a job twice, while the script run
  twice finds nothing the second time.

    Input:
      KEYS[2i-1], KEYS[2i]   per job: its working list and its queue
      ARGV[1]                "rpush" (the BRPOP end: runs next) or "lpush" (the far end)
      ARGV[2..]              the jobs' raw bytes, job i at ARGV[i+1]

    Output:
      0
*/
import { defineScript } from "./define-script.js";

export const putBackFromWorkingList = defineScript<
  number,
  readonly string[],
  readonly [push: "rpush" | "lpush", ...jobs: Buffer[]]
>({
  name: "bridgePutBack",
  lua: `
for i = 2, #ARGV do
  local wip, queue = KEYS[2 * i - 3], KEYS[2 * i - 2]
  if redis.call("lrem", wip, 1, ARGV[i]) == 1 then redis.call(ARGV[1], queue, ARGV[i]) end
end
return 0`,
});
