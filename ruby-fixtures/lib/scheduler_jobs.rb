# A real `sidekiq` with sidekiq-scheduler loaded (RUBYLIB from the shared peers:
# 5.0.6 on Sidekiq 6.4, 6.0.2 on 7.3 and 8.1): its scheduler runs beside the
# job classes of jobs.rb. The `:scheduler:` section comes from the environment,
# as sidekiq.yml would give it: BRIDGE_SCHEDULE (the `schedule:` map, JSON),
# BRIDGE_SCHEDULER_DYNAMIC and BRIDGE_SCHEDULER_DYNAMIC_EVERY.
require_relative "jobs"
require "json"
require "sidekiq-scheduler"

scheduler = {
  enabled: true,
  dynamic: ENV.fetch("BRIDGE_SCHEDULER_DYNAMIC", "true") == "true",
  dynamic_every: ENV.fetch("BRIDGE_SCHEDULER_DYNAMIC_EVERY", "1s"),
  schedule: JSON.parse(ENV.fetch("BRIDGE_SCHEDULE", "{}"))
}
Sidekiq.configure_server do |config|
  if Gem::Version.new(Sidekiq::VERSION) < Gem::Version.new("6.5")
    Sidekiq.options[:scheduler] = scheduler
  else
    config[:scheduler] = scheduler
  end
end

# A Sidekiq job the scheduler tests enqueue into a queue nobody works, to count them.
class SchedulerProofJob
  include Sidekiq::Job
  def perform(*) = nil
end
