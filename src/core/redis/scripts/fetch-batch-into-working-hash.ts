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
      ARGV[3]          L, how many working-list acknowledgements follow
      ARGV[4..3+2L]    pairs: i and the raw bytes of a finished job in the
                       working list KEYS[n+i]
      ARGV[4+2L]       the finished jobs in working hashes, in one string:
                       "i field i field ..." for the working hash KEYS[2n+i]
                       (empty for none). One argument, not two a job: ioredis
                       spends 0.1-0.2 µs on each argument of a command
                       (bench/results/ack-arguments.md), and a busy worker
                       acknowledges a batch a fetch.

    Output:
      {queue, jobs}    the queue's key and the jobs' raw bytes, first fetched
                       first: job j is in the working hash under ARGV[2] + j - 1
      false (nil)      every queue was empty (the acknowledgements were still made)
*/
import { defineScript } from "./define-script.js";

export const fetchBatchIntoWorkingHash = defineScript<
  [queue: Buffer, jobs: Buffer[]] | null,
  readonly string[],
  readonly [max: number, firstField: number, listAcks: number, ...listAcksThenHashAcks: Array<number | string | Buffer>]
>({
  name: "bridgeMoveMany",
  replies: "buffer",
  lua: `
local n = #KEYS / 3
local max = tonumber(ARGV[1])
local first = tonumber(ARGV[2])
local listed = tonumber(ARGV[3])
for a = 4, 3 + 2 * listed, 2 do
  redis.call("lrem", KEYS[n + tonumber(ARGV[a])], 1, ARGV[a + 1])
end
local done = {}
for i, field in string.gmatch(ARGV[4 + 2 * listed], "(%d+) (%d+)") do
  i = tonumber(i)
  done[i] = done[i] or {}
  table.insert(done[i], field)
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
