# The Ruby side of the network scenarios: the same NetJob as
# chaos/network-handlers.mjs. Its record goes straight to Redis
# (CHAOS_RECORD_URL), past the fault proxy Sidekiq itself goes through.
require_relative "jobs"

module NetRecord
  POOL = Sidekiq::RedisConnection.create(url: ENV.fetch("CHAOS_RECORD_URL"), size: 5)
end

class NetJob
  include Sidekiq::Job
  def perform(ms)
    sleep(ms / 1000.0) if ms > 0
    NetRecord::POOL.with { |r| r.call("RPUSH", "chaos:runs", jid) }
  end
end
