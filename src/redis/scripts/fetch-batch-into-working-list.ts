/*
  Reliable fetch of a batch: first acknowledges jobs that finished, then moves
  up to ARGV[1] jobs from the first non-empty queue into its working hash
  (RPOP with a count, one HSET), each under a field number unique in this
  process: 3 commands for a batch, plus one HDEL for all the acknowledgements
  of a working hash, in one round trip. RPOP with a count needs Redis 6.2;
  older servers fetch one job at a time (into the working list).

  A hash and not a list because acknowledging many jobs is then one HDEL of
  their fields, not one LREM (a scan of the list) each. Jobs a one-job fetch
  moved into the working list (BRPOPLPUSH blocks into a list only) are
  acknowledged here too, by LREM.

  Atomic because a job must be in its queue or in the working hash at every
  moment: a crash between the pop and the write would lose the batch.

    Input:
      KEYS[1..n]       the queues, "queue:<name>", in fetch order
      KEYS[n+1..2n]    their working lists (KEYS[n+i] is the working list of KEYS[i])
      KEYS[2n+1..3n]   their working hashes (KEYS[2n+i] is the working hash of KEYS[i])

      ARGV[1]          how many jobs at most (the free slots)
      ARGV[2]          the field number of the first job fetched (the next ones count up)
      ARGV[3]          A, how many acknowledgements follow
      ARGV[4..3+2A]    pairs: i and the field of a finished job in the working
                       hash KEYS[2n+i], or -i and the raw bytes of a finished
                       job in the working list KEYS[n+i]

    Output:
      {queue, jobs}    the queue's key and the jobs' raw bytes, first fetched
                       first: job j is in the working hash under ARGV[2] + j - 1
      false (nil)      every queue was empty (the acknowledgements were still made)
*/
import { defineScript } from "./define-script.js";

export const fetchBatchIntoWorkingList = defineScript<
  [queue: Buffer, jobs: Buffer[]] | null,
  readonly string[],
  readonly [max: number, firstField: number, acks: number, ...queueIndexAndJob: Array<number | string | Buffer>]
>({
  name: "bridgeMoveMany",
  replies: "buffer",
  lua: `
local n = #KEYS / 3
local max = tonumber(ARGV[1])
local first = tonumber(ARGV[2])
local done = {}
for a = 4, 3 + 2 * tonumber(ARGV[3]), 2 do
  local i = tonumber(ARGV[a])
  if i < 0 then
    redis.call("lrem", KEYS[n - i], 1, ARGV[a + 1])
  else
    done[i] = done[i] or {}
    table.insert(done[i], ARGV[a + 1])
  end
end
for i, fields in pairs(done) do
  for j = 1, #fields, 1000 do
    redis.call("hdel", KEYS[2 * n + i], unpack(fields, j, math.min(j + 999, #fields)))
  end
end
for i = 1, n do
  local jobs = redis.call("rpop", KEYS[i], max)
  if jobs then
    local entries = {}
    for j = 1, #jobs do
      entries[2 * j - 1] = string.format("%d", first + j - 1)
      entries[2 * j] = jobs[j]
    end
    for j = 1, #entries, 1000 do
      redis.call("hset", KEYS[2 * n + i], unpack(entries, j, math.min(j + 999, #entries)))
    end
    return {KEYS[i], jobs}
  end
end
return false`,
});
