// The Lua scripts of sidekiq-throttled, byte for byte as the gem's files hold
// them, so Node takes and gives back slots with the gem's own keys and
// atomicity, and a script's SHA1 is the one the gem's RedisPrescription sends:
// a script Ruby loaded answers Node's EVALSHA, and the other way round.
// Text unchanged from the gem (https://github.com/ixti/sidekiq-throttled, tags
// v1.5.2 and v2.1.0, lib/sidekiq/throttled/strategy/*.lua); MIT licence:
// Copyright (c) 2022 Alexey Zapparov; Copyright (c) 2020-2021 Alexey Zapparov,
// SensorTower Inc.; Copyright (c) 2015-2020 SensorTower Inc. Copy them again
// from the gem when moving to another release; test/throttled/lua.test.ts
// compares them with the gem's files.

/**
 * 2.1.0's strategy/concurrency.lua (backlog-aware).
 * KEYS: the `concurrency.v2` zset, its `.backlog_info` hash.
 * ARGV: jid, limit, lost_job_threshold (s), now (epoch s, float).
 * Returns 1 when throttled, 0 when the jid holds a slot.
 */
export const CONCURRENCY_LUA_2_1 = `local in_progress_jobs_key = KEYS[1]
local backlog_info_key = KEYS[2]
local jid = ARGV[1]
local lmt = tonumber(ARGV[2])
local lost_job_threshold = tonumber(ARGV[3])
local now = tonumber(ARGV[4])

-- supporting functions
local function over_limit()
  return lmt <= redis.call("ZCARD", in_progress_jobs_key)
end

local function job_already_in_progress()
  return redis.call("ZSCORE", in_progress_jobs_key, jid)
end

-- Estimates current backlog size. This function tends to underestimate 
-- the actual backlog. This is intentional. Overestimates are bad as it
-- can cause unnecessary delays in job processing. Underestimates are much
-- safer as they only increase workload of sidekiq processors. 
local function est_current_backlog_size()
  local old_size = tonumber(redis.call("HGET", backlog_info_key, "size")) or 0
  local old_timestamp = tonumber(redis.call("HGET", backlog_info_key, "timestamp")) or now
  
  local jobs_lost_since_old_timestamp = (now - old_timestamp) / lost_job_threshold * lmt

  return math.max(old_size - jobs_lost_since_old_timestamp, 0) 
end


local function change_backlog_size(delta)
  local curr_backlog_size = est_current_backlog_size()

  redis.call("HSET", backlog_info_key, "size", curr_backlog_size + delta) 
  redis.call("HSET", backlog_info_key, "timestamp", now)
  redis.call("EXPIRE", backlog_info_key, math.ceil((lost_job_threshold * curr_backlog_size) + 1 / lmt))
end

local function register_job_in_progress()
  redis.call("ZADD", in_progress_jobs_key, now + lost_job_threshold , jid)
  redis.call("EXPIRE", in_progress_jobs_key, lost_job_threshold)
end

local function clear_stale_in_progress_jobs()
  local cleared_count = redis.call("ZREMRANGEBYSCORE", in_progress_jobs_key, "-inf", "(" .. now)
  change_backlog_size(-cleared_count)
end

-- END supporting functions

clear_stale_in_progress_jobs()

if over_limit() and not job_already_in_progress() then
  change_backlog_size(1)
  return 1
end

register_job_in_progress()
change_backlog_size(-1)

return 0
`;

/**
 * 1.5.2's strategy/concurrency.lua (also 2.0.x's).
 * KEYS: the `concurrency.v2` zset. ARGV: jid, limit, ttl (s), now (epoch s, float).
 * Returns 1 when throttled, 0 when the jid holds a slot.
 */
export const CONCURRENCY_LUA_1_5 = `local key = KEYS[1]
local jid = ARGV[1]
local lmt = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local now = tonumber(ARGV[4])

redis.call("ZREMRANGEBYSCORE", key, "-inf", "(" .. now)

if lmt <= redis.call("ZCARD", key) and not redis.call("ZSCORE", key, jid) then
  return 1
end

redis.call("ZADD", key, now + ttl, jid)
redis.call("EXPIRE", key, ttl)

return 0
`;

/**
 * strategy/threshold.lua (the same in 1.5.2 and 2.1.0).
 * KEYS: the `threshold` list. ARGV: limit, period (s, float), now (epoch s, float).
 * Returns 1 when throttled, 0 when the start was counted.
 */
export const THRESHOLD_LUA = `local key = KEYS[1]
local lmt = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(ARGV[3])

if lmt <= redis.call("LLEN", key) and now - redis.call("LINDEX", key, -1) < ttl then
  return 1
end

redis.call("LPUSH", key, now)
redis.call("LTRIM", key, 0, lmt - 1)
redis.call("EXPIRE", key, ttl)

return 0
`;
