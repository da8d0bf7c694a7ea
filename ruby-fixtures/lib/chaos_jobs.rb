# The Ruby side of the chaos scenarios: the same ChaosJob as chaos/handlers.mjs.
require_relative "jobs"

class ChaosJob
  include Sidekiq::Job
  # Straight to Redis where Sidekiq itself goes through a fault proxy, so a
  # record measures the worker's recovery, not the record's own connection.
  RECORDS = ENV["CHAOS_RECORD_URL"] && Sidekiq::RedisConnection.create(url: ENV["CHAOS_RECORD_URL"], size: 5)

  def perform(ms)
    sleep(ms / 1000.0) if ms > 0
    if RECORDS
      RECORDS.with { |r| r.call("RPUSH", "chaos:runs", jid) }
    else
      Bridge.redis { |r| r.rpush("chaos:runs", jid) }
    end
  end
end
