# A real `sidekiq` with sidekiq-cron 2.3 loaded (RUBYLIB from the shared peers):
# its cron poller runs beside the job classes of jobs.rb.
require_relative "jobs"
require "sidekiq-cron"

Sidekiq::Cron.configure do |c|
  c.cron_poll_interval = Integer(ENV.fetch("BRIDGE_CRON_POLL", "30"))
  c.cron_history_size = Integer(ENV.fetch("BRIDGE_CRON_HISTORY", "10"))
  # Poll every namespace found in Redis, as the Node poller does by default.
  c.available_namespaces = :auto
end

# A Sidekiq job the cron tests enqueue into a queue nobody works, to count them.
class CronProofJob
  include Sidekiq::Job
  def perform(*) = nil
end
