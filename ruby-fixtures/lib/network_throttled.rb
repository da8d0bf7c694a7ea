# Ruby's side of the throttled network scenario (chaos/throttle-scenarios.ts):
# the chaos job (chaos_jobs.rb, recording its run straight to Redis in
# CHAOS_RECORD_URL) under the throttle chaos/throttle-handlers.mjs gives
# Node's: at most 4 ChaosJobs at once, a slot lost after 4 s. Each run prints
# when it started and ended as Node's handler does (`chaos-span start|end
# <token> <epoch ms> <jid>`); perform runs inside the gem's slot (taken at
# fetch, given back by its server middleware), so runs overlapping here held
# slots at once.
require_relative "chaos_jobs"
require "securerandom"
require "sidekiq/throttled"

$stdout.sync = true

module ChaosSpans
  def perform(ms)
    token = SecureRandom.hex(4)
    span = ->(edge) { $stdout.write("chaos-span #{edge} #{token} #{Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)} #{jid}\n") }
    span.call("start")
    begin
      super
    ensure
      span.call("end")
    end
  end
end

class ChaosJob
  include Sidekiq::Throttled::Job
  prepend ChaosSpans
  sidekiq_throttle(concurrency: {limit: 4, ttl: 4})
end
