/*
  Puts jobs from this process's working lists or hashes back on their queues
  (requeue at shutdown, hand back to another process, reclaim): each job goes
  back only if the LREM (list) or HDEL (hash) found it there.

  Atomic because ioredis resends an unanswered command after a reconnect: a
  plain LREM + RPUSH run twice would queue a job twice, while the script run
  twice finds nothing the second time.

    Input:
      KEYS[2i-1], KEYS[2i]   per job: its working list or hash, and its queue
      ARGV[1]                "rpush" (the BRPOP end: runs next) or "lpush" (the far end)
      ARGV[2i], ARGV[2i+1]   per job: its field in the working hash ("" when
                             it is in the working list), its raw bytes

    Output:
      0
*/
import { defineScript } from "./define-script.js";

export const requeueFromWorking = defineScript<
  number,
  readonly string[],
  readonly [push: "rpush" | "lpush", ...fieldAndJob: Array<string | Buffer>]
>({
  name: "bridgePutBack",
  lua: `
for i = 1, (#ARGV - 1) / 2 do
  local working, queue = KEYS[2 * i - 1], KEYS[2 * i]
  local field, job = ARGV[2 * i], ARGV[2 * i + 1]
  local removed
  if field == "" then
    removed = redis.call("lrem", working, 1, job)
  else
    removed = redis.call("hdel", working, field)
  end
  if removed == 1 then redis.call(ARGV[1], queue, job) end
end
return 0`,
});
