# sidekiq-throttled (1.5.x on Sidekiq 7, 2.1.x on 8, whichever RUBYLIB names)
# installed as its README says, with the job classes the throttled interop
# tests run from both languages. Each job records its start and end in Redis:
# `throttled:test:running` counts the jobs running now (INCR at start, DECR at
# end), `throttled:test:seen` holds that count at each start (its maximum is
# the most that ever ran at once), and `throttled:test:starts` each start's
# time and runtime, so Node's handlers (interop-tests/support/throttled.ts)
# record the same. BRIDGE_THROTTLE_TTL sets the concurrency throttle's
# lost-job threshold (the gem's `ttl:`, 900 s by default) for the lost-slot test.
require_relative "jobs"
require "sidekiq/throttled"

module ThrottledRecording
  def perform(seconds = 0, *_rest)
    Bridge.redis do |r|
      n = r.call("INCR", "throttled:test:running")
      r.call("RPUSH", "throttled:test:seen", n.to_s)
      r.call("RPUSH", "throttled:test:starts", JSON.generate({"at" => Time.now.to_f, "by" => "ruby", "jid" => jid, "class" => self.class.name}))
    end
    sleep seconds.to_f
  ensure
    Bridge.redis do |r|
      r.call("DECR", "throttled:test:running")
      r.call("RPUSH", "throttled:test:done", jid)
    end
  end
end

# At most 2 at once.
class ConcurrencyJob
  include Sidekiq::Job
  include Sidekiq::Throttled::Job
  include ThrottledRecording
  sidekiq_options queue: "thr"
  sidekiq_throttle(concurrency: {limit: 2, ttl: ENV.fetch("BRIDGE_THROTTLE_TTL", "900").to_i})
end

# At most 3 starts in any 3 seconds.
class ThresholdJob
  include Sidekiq::Job
  include Sidekiq::Throttled::Job
  include ThrottledRecording
  sidekiq_options queue: "thr"
  sidekiq_throttle(threshold: {limit: 3, period: 3})
end

# One start per 30 s; a throttled job is scheduled for when the period ends.
class ScheduledThrottleJob
  include Sidekiq::Job
  include Sidekiq::Throttled::Job
  include ThrottledRecording
  sidekiq_options queue: "thrs"
  sidekiq_throttle(threshold: {limit: 1, period: 30}, requeue: {with: :schedule})
end

# The gem's own view of its keys, for the tests.
module ThrottledState
  def self.strategy(name) = Sidekiq::Throttled::Registry.get(name)

  # How many concurrency slots Ruby sees taken.
  def self.concurrency_count(name) = strategy(name).concurrency.strategies.first.count

  # Whether the gem would throttle this job now (taking a slot when it does not).
  def self.throttled?(payload) = Sidekiq::Throttled.throttled?(JSON.generate(payload))

  # What the gem's fetch does with a throttled job it fetched from `queue`.
  def self.requeue_throttled(queue, payload)
    work = Sidekiq::BasicFetch::UnitOfWork.new("queue:#{queue}", JSON.generate(payload), Sidekiq.default_configuration)
    Sidekiq::Throttled.requeue_throttled(work)
  end

  # The server middleware's end of a job: the slot goes back.
  def self.finalize!(name, jid) = strategy(name).finalize!(jid)
end
