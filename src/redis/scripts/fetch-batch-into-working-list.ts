/*
  Reliable fetch of a batch: first acknowledges jobs that finished (LREM from
  their working lists), then moves up to ARGV[1] jobs from the first non-empty
  queue into its working list (RPOP with a count, LPUSH in chunks of 1000), in
  the order RPOPLPUSH one by one would leave them: 3 commands for a batch, and
  one round trip for the acknowledgements and the fetch. RPOP with a count
  needs Redis 6.2; older servers fetch one job at a time.

  Atomic because a job must be in its queue or in the working list at every
  moment: a crash between the pop and the push would lose the batch.

    Input:
      KEYS[1..n]      the queues, "queue:<name>", in fetch order
      KEYS[n+1..2n]   their working lists (KEYS[n+i] is the working list of KEYS[i])

      ARGV[1]         how many jobs at most (the free slots)
      ARGV[2]         A, how many acknowledgements follow
      ARGV[3..2+2A]   pairs: the queue's index i (1-based, its working list is
                      KEYS[n+i]) and the finished job's raw bytes

    Output:
      {queue, jobs}   the queue's key and the jobs' raw bytes, first fetched first
      false (nil)     every queue was empty (the acknowledgements were still made)
*/
import { defineScript } from "./define-script.js";

export const fetchBatchIntoWorkingList = defineScript<
  [queue: Buffer, jobs: Buffer[]] | null,
  readonly string[],
  readonly [max: number, acks: number, ...queueIndexAndJob: Array<number | Buffer>]
>({
  name: "bridgeMoveMany",
  replies: "buffer",
  lua: `
local n = #KEYS / 2
local max = tonumber(ARGV[1])
for a = 3, 2 + 2 * tonumber(ARGV[2]), 2 do
  redis.call("lrem", KEYS[n + tonumber(ARGV[a])], 1, ARGV[a + 1])
end
for i = 1, n do
  local jobs = redis.call("rpop", KEYS[i], max)
  if jobs then
    for j = 1, #jobs, 1000 do
      redis.call("lpush", KEYS[n + i], unpack(jobs, j, math.min(j + 999, #jobs)))
    end
    return {KEYS[i], jobs}
  end
end
return false`,
});
