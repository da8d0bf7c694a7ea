/*
  Rewrites list elements in place (a migration of a queue's payloads): for
  each (hint, old, new), finds `old` at `hint + drift` (drift: how far the
  previous element had moved, by pushes at the head), else within `window` of
  it, else anywhere from `window` before it to the tail (LPOS from the tail,
  bounded by MAXLEN; a chunked scan on Redis < 6.0.6), and LSETs `new` there.
  Pushes only move elements towards the tail, so an element not found there
  was popped by a worker, deleted or rewritten meanwhile: it is left alone
  (and an element shifted the other way by a mass LREM is left for the next
  pass). The bound keeps each miss as cheap as the element's distance from
  the tail, where workers pop.

  Atomic because workers push and pop the list meanwhile: the element found
  must be the one replaced, and no job may be lost or doubled.

    Input:
      KEYS[1]      the list, "queue:<name>"
      ARGV[1]      the drift so far
      ARGV[2]      the window
      ARGV[3..]    triples: the index where `old` was read, old, new

    Output:
      one status per triple (1 replaced, 0 gone), then the last drift
*/
import { defineScript } from "./define-script.js";

export const replaceListElements = defineScript<
  number[],
  readonly [list: string],
  readonly [drift: number, window: number, ...hintOldNew: Array<string | number | Buffer>]
>({
  name: "bridgeMigListReplace",
  lua: `
local key = KEYS[1]
local drift = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local out = {}
local function find(old, guess)
  if guess >= 0 and redis.call("LINDEX", key, guess) == old then return guess end
  local from = guess - window
  if from < 0 then from = 0 end
  local items = redis.call("LRANGE", key, from, guess + window)
  local best
  for j = 1, #items do
    if items[j] == old then
      local p = from + j - 1
      if best == nil or math.abs(p - guess) < math.abs(best - guess) then best = p end
    end
  end
  if best then return best end
  local len = redis.call("LLEN", key)
  if from >= len then return nil end
  local r = redis.pcall("LPOS", key, old, "RANK", -1, "MAXLEN", len - from)
  if type(r) == "number" then return r end
  if type(r) == "table" and r.err then
    local i = from
    while i < len do
      local chunk = redis.call("LRANGE", key, i, i + 999)
      for j = 1, #chunk do
        if chunk[j] == old then return i + j - 1 end
      end
      i = i + 1000
    end
  end
  return nil
end
for i = 3, #ARGV, 3 do
  local hint = tonumber(ARGV[i])
  local pos = find(ARGV[i + 1], hint + drift)
  if pos then
    redis.call("LSET", key, pos, ARGV[i + 2])
    drift = pos - hint
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
out[#out + 1] = drift
return out`,
});
