// The Lua scripts of sidekiq-unique-jobs 9.0.0.alpha2, as the gem renders them: each
// script with its ERB partials (lua/shared/) put in, so Node takes and releases
// locks with the gem's own keys, changelog and atomicity. Text unchanged from
// the gem (https://github.com/mhenrixon/sidekiq-unique-jobs, tag v9.0.0.alpha2); MIT
// licence, Copyright (c) 2017 Mikael Henriksson. Regenerate from the gem's
// lib/sidekiq_unique_jobs/lua/ when moving to another release.

/** lib/sidekiq_unique_jobs/lua/shared/_common.lua (a partial) */
const V9_COMMON = `local function toversion(version)
  local _, _, maj, min, pat = string.find(version, "(%d+)%.(%d+)%.(%d+)")

  return {
    ["version"] = version,
    ["major"]   = tonumber(maj),
    ["minor"]   = tonumber(min),
    ["patch"]   = tonumber(pat)
  }
end

local function log_debug( ... )
  if debug_lua ~= true then return end

  local args = {...}
  local result = ""
  for _,v in ipairs(args) do
    result = result .. " " .. tostring(v)
  end
  redis.log(redis.LOG_DEBUG, script_name .. " -" ..  result)
end
`;

/** lib/sidekiq_unique_jobs/lua/shared/_delete_from_queue.lua (a partial) */
const V9_DELETE_FROM_QUEUE = `local function delete_from_queue(queue, digest)
  local total = redis.call("LLEN", queue)
  local per   = 50

  for index = 0, total, per do
    local items = redis.call("LRANGE", queue, index, index + per - 1)

    if #items == 0 then
      break
    end

    for _, item in pairs(items) do
      if string.find(item, digest) then
        redis.call("LREM", queue, 1, item)

        return item
      end
    end
  end

  return nil
end
`;

/** lib/sidekiq_unique_jobs/lua/shared/_delete_from_sorted_set.lua (a partial) */
const V9_DELETE_FROM_SORTED_SET = `local function delete_from_sorted_set(name, digest)
  local score  = redis.call("ZSCORE", "uniquejobs:digests", digest)
  local total  = redis.call("ZCARD", name)
  local per    = 50

  for offset = 0, total, per do
    local items

    if score then
      items = redis.call("ZRANGE", name, score, "+inf", "BYSCORE", "LIMIT", offset, per)
    else
      items = redis.call("ZRANGE", name, offset, offset + per -1)
    end

    if #items == 0 then
      break
    end

    for _, item in pairs(items) do
      if string.find(item, digest) then
        redis.call("ZREM", name, item)

        return item
      end
    end
  end

  return nil
end
`;

/** lib/sidekiq_unique_jobs/lua/lock.lua */
export const V9_LOCK = `local locked  = KEYS[1]
local digests = KEYS[2]

local job_id    = ARGV[1]
local pttl      = tonumber(ARGV[2])
local lock_type = ARGV[3]
local limit     = tonumber(ARGV[4])
local metadata  = ARGV[5]

--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[6])
---------  END injected arguments ---------

if redis.call("HEXISTS", locked, job_id) == 1 then
  return job_id
end

if redis.call("HLEN", locked) >= limit then
  return nil
end

redis.call("HSET", locked, job_id, metadata)

local score
if lock_type == "until_expired" and pttl and pttl > 0 then
  score = current_time + pttl
else
  score = current_time
end

local digest = string.gsub(locked, ":LOCKED$", "")
redis.call("ZADD", digests, score, digest)

if pttl and pttl > 0 then
  redis.call("PEXPIRE", locked, pttl)
end

return job_id
`;

/** lib/sidekiq_unique_jobs/lua/unlock.lua */
export const V9_UNLOCK = `local locked  = KEYS[1]
local digests = KEYS[2]

local job_id    = ARGV[1]
local lock_type = ARGV[2]

if lock_type ~= "force" and lock_type == "until_expired" then
  return job_id
end

local holds_lock = redis.call("HEXISTS", locked, job_id) == 1
if not holds_lock then
  if redis.call("HLEN", locked) == 0 then
    local digest = string.gsub(locked, ":LOCKED$", "")
    redis.call("ZREM", digests, digest)
    return job_id
  end
  return nil
end

redis.call("HDEL", locked, job_id)

if redis.call("HLEN", locked) == 0 then
  local digest = string.gsub(locked, ":LOCKED$", "")
  redis.call("ZREM", digests, digest)
  redis.call("UNLINK", locked)
end

return job_id
`;

/** lib/sidekiq_unique_jobs/lua/delete_job_by_digest.lua */
export const V9_DELETE_JOB_BY_DIGEST = `-------- BEGIN keys ---------
local queue        = KEYS[1]
local schedule_set = KEYS[2]
local retry_set    = KEYS[3]
--------  END keys  ---------

-------- BEGIN Arguments ---------
local digest       = ARGV[1]
--------  END Arguments  ---------

--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[2])
local debug_lua    = tostring(ARGV[3]) == "1"
local max_history  = tonumber(ARGV[4])
local script_name  = tostring(ARGV[5]) .. ".lua"
---------  END injected arguments ---------

--------  BEGIN local functions --------
${V9_COMMON}
${V9_DELETE_FROM_QUEUE}
${V9_DELETE_FROM_SORTED_SET}
----------  END local functions ----------


--------  BEGIN delete_job_by_digest.lua --------
local result = delete_from_queue(queue, digest)
if result then
  return result
end

result = delete_from_sorted_set(schedule_set, digest)
if result then
  return result
end

result = delete_from_sorted_set(retry_set, digest)
return result
--------   END delete_job_by_digest.lua  --------
`;
