# The Ruby side of the chaos scenarios: the same ChaosJob as chaos/handlers.mjs.
require_relative "jobs"

class ChaosJob
  include Sidekiq::Job
  def perform(ms)
    sleep(ms / 1000.0) if ms > 0
    Bridge.redis { |r| r.rpush("chaos:runs", jid) }
  end
end
