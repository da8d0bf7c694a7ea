/*
  Moves jobs to another queue (a migration): for each (old, new), LREMs one
  `old` (nearest the tail, so the oldest copy) from the source and, only if
  one was removed, LPUSHes `new` onto the destination; SADDs the
  destination's name to `queues` when anything moved.

  Atomic because workers pop the source meanwhile: a job is pushed onto the
  destination only if it was taken from the source, so none runs twice and
  none is lost.

    Input:
      KEYS[1]     the source queue, "queue:<name>"
      KEYS[2]     the destination queue, "queue:<name>"
      KEYS[3]     "queues"
      ARGV[1]     the destination's name
      ARGV[2..]   pairs: old, new

    Output:
      one status per pair: 1 moved, 0 gone
*/
import { defineScript } from "./define-script.js";

export const moveListElements = defineScript<
  number[],
  readonly [source: string, destination: string, queues: string],
  readonly [destinationName: string, ...oldNew: Array<string | number | Buffer>]
>({
  name: "bridgeMigListMove",
  lua: `
local src, dst, queues = KEYS[1], KEYS[2], KEYS[3]
local out = {}
local any = false
for i = 2, #ARGV, 2 do
  if redis.call("LREM", src, -1, ARGV[i]) == 1 then
    redis.call("LPUSH", dst, ARGV[i + 1])
    any = true
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if any then redis.call("SADD", queues, ARGV[1]) end
return out`,
});
