/*
  The push that finishes an add-on claim: deletes the in-flight entry and,
  only if it held what the caller stored, pushes the prepared payload as
  Sidekiq's client does (SADD queues, LPUSH queue:<name>) and records the
  gem's own bookkeeping of the push (sidekiq-cron's last_enqueue_time and
  jid_history), all in one step.

  Atomic so that the fire time is pushed once: a process killed before this
  call leaves the entry for recovery, one killed after it leaves nothing to
  recover, and the payload cannot be pushed twice.

    Input:
      KEYS[1]   the bridge's in-flight claims hash
      KEYS[2]   "queues"
      KEYS[3]   "queue:<name>"
      KEYS[4]   optional: a hash to record the push in (the cron job's hash)
      KEYS[5]   optional: a list to record the push in (the cron job's jid_history)
      ARGV[1]   the entry's field
      ARGV[2]   the entry as stored (with its payload)
      ARGV[3]   the queue's name
      ARGV[4]   the payload, or "" when a client middleware stopped the job
      ARGV[5]   KEYS[4]'s field, ARGV[6] its value
      ARGV[7]   the element LPUSHed to KEYS[5], ARGV[8] how many of them to keep

    Output:
      1 when this call pushed (or recorded the stopped job), 0 when the entry was no longer this
*/
import { defineScript } from "./define-script.js";

export const pushAddonClaim = defineScript<
  number,
  readonly [claims: string, queues: string, queue: string, ...record: string[]],
  readonly [field: string, entry: string, queueName: string, payload: string, ...record: Array<string | number>]
>({
  name: "bridgePushAddonClaim",
  lua: `
if redis.call("hget", KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call("hdel", KEYS[1], ARGV[1])
if ARGV[4] ~= "" then
  redis.call("sadd", KEYS[2], ARGV[3])
  redis.call("lpush", KEYS[3], ARGV[4])
end
if KEYS[4] then redis.call("hset", KEYS[4], ARGV[5], ARGV[6]) end
if KEYS[5] then
  redis.call("lpush", KEYS[5], ARGV[7])
  redis.call("ltrim", KEYS[5], 0, tonumber(ARGV[8]) - 1)
end
return 1`,
});
