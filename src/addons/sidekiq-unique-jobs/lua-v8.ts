// The Lua scripts of sidekiq-unique-jobs 8.1.0, as the gem renders them: each
// script with its ERB partials (lua/shared/) put in, so Node takes and releases
// locks with the gem's own keys, changelog and atomicity. Text unchanged from
// the gem (https://github.com/mhenrixon/sidekiq-unique-jobs, tag v8.1.0); MIT
// licence, Copyright (c) 2017 Mikael Henriksson. Regenerate from the gem's
// lib/sidekiq_unique_jobs/lua/ when moving to another release.

/** lib/sidekiq_unique_jobs/lua/shared/_common.lua (a partial) */
const V8_COMMON = `local function toversion(version)
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

local function log(message, prev_jid)
  if not max_history or max_history == 0 then return end
  local entry = cjson.encode({digest = digest, job_id = job_id, script = script_name, message = message, time = current_time, prev_jid = prev_jid })

  log_debug("ZADD", changelog, current_time, entry);
  redis.call("ZADD", changelog, current_time, entry);
  local total_entries = redis.call("ZCARD", changelog)
  local removed_entries = redis.call("ZREMRANGEBYRANK", changelog, 0, -1 * max_history)
  if removed_entries > 0 then
    log_debug("Removing", removed_entries , "entries from changelog (total entries", total_entries, "exceeds max_history:", max_history ..")");
  end
  log_debug("PUBLISH", changelog, entry);
  redis.call("PUBLISH", changelog, entry);
end
`;

/** lib/sidekiq_unique_jobs/lua/shared/_delete_from_queue.lua (a partial) */
const V8_DELETE_FROM_QUEUE = `local function delete_from_queue(queue, digest)
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
const V8_DELETE_FROM_SORTED_SET = `local function delete_from_sorted_set(name, digest)
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

/** lib/sidekiq_unique_jobs/lua/queue_and_lock.lua */
export const V8_QUEUE_AND_LOCK = `-------- BEGIN keys ---------
local digest           = KEYS[1]
local queued           = KEYS[2]
local primed           = KEYS[3]
local locked           = KEYS[4]
local info             = KEYS[5]
local changelog        = KEYS[6]
local digests          = KEYS[7]
local expiring_digests = KEYS[8]
-------- END keys ---------


-------- BEGIN lock arguments ---------
local job_id       = ARGV[1]
local pttl         = tonumber(ARGV[2])
local lock_type    = ARGV[3]
local limit        = tonumber(ARGV[4])
local lock_score   = ARGV[5]
-------- END lock arguments -----------


--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[6])
local debug_lua    = tostring(ARGV[7]) == "1"
local max_history  = tonumber(ARGV[8])
local script_name  = tostring(ARGV[9]) .. ".lua"
local redisversion = ARGV[10]
---------  END injected arguments ---------


--------  BEGIN local functions --------
${V8_COMMON}
----------  END local functions ----------


---------  BEGIN queue_and_lock.lua ---------
-- Combined queue + lock script for non-blocking lock acquisition.
-- Eliminates the LMOVE between separate queue/lock scripts and
-- removes duplicate HEXISTS checks.

log_debug("BEGIN queue_and_lock digest:", digest, "job_id:", job_id)

if limit <= 1 then
  -- Single-lock fast path: use HLEN to detect both re-lock and contention
  -- in one command instead of HEXISTS + HLEN
  local locked_count = redis.call("HLEN", locked)
  if locked_count > 0 then
    -- Something is in the hash — check if it's us (re-lock) or someone else (contention)
    if redis.call("HEXISTS", locked, job_id) == 1 then
      log_debug(locked, "already locked with job_id:", job_id)
      log("Duplicate")
      return job_id
    else
      log_debug("Limit exceeded:", digest, "(", locked_count, "of", limit, ")")
      log("Limited")
      return nil
    end
  end

  -- locked_count == 0: no locks held.
  -- Lua script atomicity guarantees no race between HLEN and HSET,
  -- so no NX guard is needed. Unconditionally SET the digest key
  -- (required by middleware, web UI, and other scripts while lock is held).
  log_debug("SET", digest, job_id)
  redis.call("SET", digest, job_id)
else
  -- Multi-lock path: original HEXISTS + limit checking
  if redis.call("HEXISTS", locked, job_id) == 1 then
    log_debug(locked, "already locked with job_id:", job_id)
    log("Duplicate")
    return job_id
  end

  local set_result = redis.call("SET", digest, job_id, "NX")
  if not set_result then
    local prev_jid = redis.call("GET", digest)
    if prev_jid == job_id then
      log_debug(digest, "already queued with job_id:", job_id)
      log("Duplicate")
      return job_id
    else
      local locked_count = redis.call("HLEN", locked)
      local queued_count = redis.call("LLEN", queued)
      if limit > locked_count and queued_count < limit then
        log_debug("Within limit, replacing", prev_jid, "with", job_id)
        redis.call("SET", digest, job_id)
      else
        log_debug("Limit exceeded:", digest)
        log("Limit exceeded", prev_jid)
        return nil
      end
    end
  end

  local locked_count = redis.call("HLEN", locked)
  if limit <= locked_count then
    log_debug("Limit exceeded:", digest, "(", locked_count, "of", limit, ")")
    log("Limited")
    return nil
  end
end

-- 4. Acquire the lock directly (skip LPUSH/LMOVE, go straight to HSET)
if lock_type == "until_expired" and pttl and pttl > 0 then
  log_debug("ZADD", expiring_digests, current_time + pttl, digest)
  redis.call("ZADD", expiring_digests, current_time + pttl, digest)
else
  local score
  if #lock_score == 0 then
    score = current_time
  else
    score = lock_score
  end
  log_debug("ZADD", digests, score, digest)
  redis.call("ZADD", digests, score, digest)
end

log_debug("HSET", locked, job_id, current_time)
redis.call("HSET", locked, job_id, current_time)

-- 5. Set TTL if specified
if pttl and pttl > 0 then
  log_debug("PEXPIRE", digest, pttl)
  redis.call("PEXPIRE", digest, pttl)

  log_debug("PEXPIRE", locked, pttl)
  redis.call("PEXPIRE", locked, pttl)

  log_debug("PEXPIRE", info, pttl)
  redis.call("PEXPIRE", info, pttl)
end

log("Locked")
log_debug("END queue_and_lock digest:", digest, "job_id:", job_id)
return job_id
----------  END queue_and_lock.lua ----------
`;

/** lib/sidekiq_unique_jobs/lua/queue.lua */
export const V8_QUEUE = `-------- BEGIN keys ---------
local digest    = KEYS[1]
local queued    = KEYS[2]
local primed    = KEYS[3]
local locked    = KEYS[4]
local info      = KEYS[5]
local changelog = KEYS[6]
local digests   = KEYS[7]
-------- END keys ---------


-------- BEGIN lock arguments ---------
local job_id     = ARGV[1]      -- The job_id that was previously primed
local pttl       = tonumber(ARGV[2])
local lock_type  = ARGV[3]
local limit      = tonumber(ARGV[4])
local lock_score = ARGV[5]
-------- END lock arguments -----------


--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[6])
local debug_lua    = tostring(ARGV[7]) == "1"
local max_history  = tonumber(ARGV[8])
local script_name  = tostring(ARGV[9]) .. ".lua"
---------  END injected arguments ---------


--------  BEGIN Variables --------
-- LLEN/HLEN deferred to where needed (only in limit check branch)
--------   END Variables  --------


--------  BEGIN local functions --------
${V8_COMMON}
----------  END local functions ----------


--------  BEGIN queue.lua --------
log_debug("BEGIN queue with key:", digest, "for job:", job_id)

if redis.call("HEXISTS", locked, job_id) == 1 then
  log_debug("HEXISTS", locked, job_id, "== 1")
  log("Duplicate")
  return job_id
end

-- Try SET NX first: if digest key doesn't exist, claim it in one command
local set_result = redis.call("SET", digest, job_id, "NX")
if set_result then
  log_debug("SET NX", digest, job_id, "=> OK (first enqueue)")
else
  -- Digest exists: check who holds it
  local prev_jid = redis.call("GET", digest)
  log_debug("job_id:", job_id, "prev_jid:", prev_jid)

  if prev_jid == job_id then
    log_debug(digest, "already queued with job_id:", job_id)
    log("Duplicate")
    return job_id
  else
    -- Different job holds the digest: check limits
    local locked_count = redis.call("HLEN", locked)
    local queued_count = redis.call("LLEN", queued)
    if limit > locked_count and queued_count < limit then
      log_debug("Within limit:", digest, "(",  locked_count, "of", limit, ")", "queued (", queued_count, "of", limit, ")")
      log_debug("SET", digest, job_id, "(was", prev_jid, ")")
      redis.call("SET", digest, job_id)
    else
      log_debug("Limit exceeded:", digest, "(",  locked_count, "of", limit, ")")
      log("Limit exceeded", prev_jid)
      return prev_jid
    end
  end
end

log_debug("LPUSH", queued, job_id)
redis.call("LPUSH", queued, job_id)

-- The Sidekiq client should only set pttl for until_expired
-- The Sidekiq server should set pttl for all other jobs
if pttl and pttl > 0 then
  log_debug("PEXPIRE", digest, pttl)
  redis.call("PEXPIRE", digest, pttl)
  log_debug("PEXPIRE", queued, pttl)
  redis.call("PEXPIRE", queued, pttl)
end

log("Queued")
log_debug("END queue with key:", digest, "for job:", job_id)
return job_id
--------  END queue.lua --------
`;

/** lib/sidekiq_unique_jobs/lua/lock.lua */
export const V8_LOCK = `-------- BEGIN keys ---------
local digest           = KEYS[1]
local queued           = KEYS[2]
local primed           = KEYS[3]
local locked           = KEYS[4]
local info             = KEYS[5]
local changelog        = KEYS[6]
local digests          = KEYS[7]
local expiring_digests = KEYS[8]
-------- END keys ---------


-------- BEGIN lock arguments ---------
local job_id       = ARGV[1]
local pttl         = tonumber(ARGV[2])
local lock_type    = ARGV[3]
local limit        = tonumber(ARGV[4])
local lock_score   = ARGV[5]
-------- END lock arguments -----------


--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[6])
local debug_lua    = tostring(ARGV[7]) == "1"
local max_history  = tonumber(ARGV[8])
local script_name  = tostring(ARGV[9]) .. ".lua"
local redisversion = ARGV[10]
---------  END injected arguments ---------


--------  BEGIN local functions --------
${V8_COMMON}
----------  END local functions ----------


---------  BEGIN lock.lua ---------
log_debug("BEGIN lock digest:", digest, "job_id:", job_id)

if redis.call("HEXISTS", locked, job_id) == 1 then
  log_debug(locked, "already locked with job_id:", job_id)
  log("Duplicate")

  if limit <= 1 then
    log_debug("UNLINK", queued, primed)
    redis.call("UNLINK", queued, primed)
  else
    redis.call("LREM", queued, -1, job_id)
    redis.call("LREM", primed, 1, job_id)
  end

  return job_id
end

local locked_count   = redis.call("HLEN", locked)
local within_limit   = limit > locked_count
local limit_exceeded = not within_limit

if limit_exceeded then
  log_debug("Limit exceeded:", digest, "(",  locked_count, "of", limit, ")")
  log("Limited")
  return nil
end

if lock_type == "until_expired" and pttl and pttl > 0 then
  log_debug("ZADD", expiring_digests, current_time + pttl, digest)
  redis.call("ZADD", expiring_digests, current_time + pttl, digest)
else
  local score

  if #lock_score == 0 then
    score = current_time
  else
    score = lock_score
  end

  log_debug("ZADD", digests, score, digest)
  redis.call("ZADD", digests, score, digest)
end

log_debug("HSET", locked, job_id, current_time)
redis.call("HSET", locked, job_id, current_time)

if limit <= 1 then
  -- For single-lock (common case): just UNLINK both lists.
  -- No need to LREM individual entries since we're deleting the whole key.
  log_debug("UNLINK", queued, primed)
  redis.call("UNLINK", queued, primed)
else
  -- For multi-lock: carefully remove only this job's entries
  log_debug("LREM", primed, 1, job_id)
  redis.call("LREM", primed, 1, job_id)

  log_debug("LREM", queued, -1, job_id)
  redis.call("LREM", queued, -1, job_id)
end

-- The Sidekiq client sets pttl
if pttl and pttl > 0 then
  log_debug("PEXPIRE", digest, pttl)
  redis.call("PEXPIRE", digest, pttl)

  log_debug("PEXPIRE", locked, pttl)
  redis.call("PEXPIRE", locked, pttl)

  log_debug("PEXPIRE", info, pttl)
  redis.call("PEXPIRE", info, pttl)
end

log("Locked")
log_debug("END lock digest:", digest, "job_id:", job_id)
return job_id
----------  END lock.lua  ----------
`;

/** lib/sidekiq_unique_jobs/lua/unlock.lua */
export const V8_UNLOCK = `-------- BEGIN keys ---------
local digest    = KEYS[1]
local queued    = KEYS[2]
local primed    = KEYS[3]
local locked    = KEYS[4]
local info      = KEYS[5]
local changelog = KEYS[6]
local digests   = KEYS[7]
-------- END keys ---------


-------- BEGIN lock arguments ---------
local job_id     = ARGV[1]
local pttl       = tonumber(ARGV[2])
local lock_type  = ARGV[3]
local limit      = tonumber(ARGV[4])
local lock_score = ARGV[5]
-------- END lock arguments -----------


-------- BEGIN unlock-specific arguments ---------
-- sync_locked flag: when present (ARGV has 11 elements), shifts injected args by 1
local has_sync_flag = #ARGV > 10
local sync_locked   = has_sync_flag and tonumber(ARGV[6]) == 1
local arg_offset    = has_sync_flag and 1 or 0
-------- END unlock-specific arguments -----------


--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[6 + arg_offset])
local debug_lua    = tostring(ARGV[7 + arg_offset]) == "1"
local max_history  = tonumber(ARGV[8 + arg_offset])
local script_name  = tostring(ARGV[9 + arg_offset]) .. ".lua"
local redisversion = ARGV[10 + arg_offset]
---------  END injected arguments ---------


--------  BEGIN Variables --------
-- Defer LLEN/HLEN calls to where they're needed to avoid unnecessary commands
---------  END Variables ---------


--------  BEGIN local functions --------
${V8_COMMON}
----------  END local functions ----------


---------  Begin unlock.lua ---------
log_debug("BEGIN unlock digest:", digest, "(job_id: " .. job_id ..")")

-- Fast path for sync-locked single locks:
-- We know the job holds the lock (acquired atomically via queue_and_lock.lua)
-- No queued/primed lists exist, no BLMOVE waiters, no sentinel needed.
if sync_locked and limit <= 1 then
  if lock_type ~= "until_expired" then
    -- Non-TTL: UNLINK + ZREM = 2 commands
    -- Skip HDEL: UNLINK(locked) deletes the entire hash, making HDEL redundant
    log_debug("UNLINK", digest, info, locked, primed)
    redis.call("UNLINK", digest, info, locked, primed)
    log_debug("ZREM", digests, digest)
    redis.call("ZREM", digests, digest)
  else
    -- until_expired: don't HDEL (lock persists until TTL), just ZREM from digests
    log_debug("ZREM", digests, digest)
    redis.call("ZREM", digests, digest)
  end
  log("Unlocked")
  log_debug("END unlock digest:", digest, "(job_id: " .. job_id ..")")
  return job_id
end

-- Standard path: check if this job actually holds the lock
local holds_lock = redis.call("HEXISTS", locked, job_id) == 1

-- Clean up queued/primed entries only if not holding the lock
-- (when holding the lock, lock.lua already UNLINKed both lists)
if not holds_lock then
  redis.call("LREM", queued, -1, job_id)
  redis.call("LREM", primed, -1, job_id)
end
log_debug("HEXISTS", locked, job_id, "=>", holds_lock)

if not holds_lock then
  -- Job doesn't hold the lock - check if this is an orphaned lock scenario
  local queued_count = redis.call("LLEN", queued)
  local primed_count = redis.call("LLEN", primed)
  local locked_count = redis.call("HLEN", locked)
  if queued_count == 0 and primed_count == 0 and locked_count == 0 then
    log_debug("Orphaned lock - cleaning up")
    -- Continue with cleanup below
  else
    -- Other jobs still hold locks for this digest
    log("Yielding to other lock holders")
    log_debug("Yielding to other lock holders for", digest, "by job", job_id)
    -- Return nil to indicate this job did not hold the lock
    return nil
  end
end

if lock_type ~= "until_expired" then
  log_debug("HDEL", locked, job_id)
  redis.call("HDEL", locked, job_id)

  if limit and limit > 1 then
    -- Multi-lock: need to check if others remain
    local locked_count = redis.call("HLEN", locked)

    log_debug("UNLINK", digest, info)
    redis.call("UNLINK", digest, info)

    if locked_count < 1 then
      log_debug("UNLINK", locked, primed)
      redis.call("UNLINK", locked, primed)
      log_debug("ZREM", digests, digest)
      redis.call("ZREM", digests, digest)
    elseif redis.call("LLEN", primed) == 0 then
      log_debug("UNLINK", primed)
      redis.call("UNLINK", primed)
    end
  else
    -- Single-lock (limit <= 1): after HDEL, no locks remain.
    -- Clean up everything in one batch without checking HLEN.
    log_debug("UNLINK", digest, info, locked, primed)
    redis.call("UNLINK", digest, info, locked, primed)
    log_debug("ZREM", digests, digest)
    redis.call("ZREM", digests, digest)
  end
else
  -- until_expired: don't HDEL, but still remove from digests tracking
  log_debug("ZREM", digests, digest)
  redis.call("ZREM", digests, digest)
end

-- Push sentinel to unblock any waiting BLMOVE
log_debug("LPUSH", queued, "1")
redis.call("LPUSH", queued, "1")

log_debug("PEXPIRE", queued, 5000)
redis.call("PEXPIRE", queued, 5000)

log("Unlocked")
log_debug("END unlock digest:", digest, "(job_id: " .. job_id ..")")
return job_id
---------  END unlock.lua ---------
`;

/** lib/sidekiq_unique_jobs/lua/delete_by_digest.lua */
export const V8_DELETE_BY_DIGEST = `-------- BEGIN keys ---------
local digest     = KEYS[1]
local queued     = KEYS[2]
local primed     = KEYS[3]
local locked     = KEYS[4]
local run_digest = KEYS[5]
local run_queued = KEYS[6]
local run_primed = KEYS[7]
local run_locked = KEYS[8]
local digests    = KEYS[9]
--------  END keys  ---------

--------  BEGIN injected arguments --------
local current_time = tonumber(ARGV[1])
local debug_lua    = tostring(ARGV[2]) == "1"
local max_history  = tonumber(ARGV[3])
local script_name  = tostring(ARGV[4]) .. ".lua"
local redisversion = tostring(ARGV[5])
---------  END injected arguments ---------

--------  BEGIN local functions --------
${V8_COMMON}
----------  END local functions ----------

--------  BEGIN delete_by_digest.lua --------
local counter       = 0
local redis_version = toversion(redisversion)

log_debug("BEGIN delete_by_digest:", digest)

log_debug("UNLINK", digest, queued, primed, locked, run_digest, run_queued, run_primed, run_locked)
counter = redis.call("UNLINK", digest, queued, primed, locked, run_digest, run_queued, run_primed, run_locked)

log_debug("ZREM", digests, digest)
redis.call("ZREM", digests, digest)

log_debug("END delete_by_digest:", digest, "(deleted " ..  counter .. " keys)")
return counter
--------   END delete_by_digest.lua  --------
`;

/** lib/sidekiq_unique_jobs/lua/delete_job_by_digest.lua */
export const V8_DELETE_JOB_BY_DIGEST = `-------- BEGIN keys ---------
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
${V8_COMMON}
${V8_DELETE_FROM_QUEUE}
${V8_DELETE_FROM_SORTED_SET}
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
