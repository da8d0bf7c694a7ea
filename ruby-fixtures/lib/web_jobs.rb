# Job classes for the web dashboard tests (`sidekiq -r .../lib/web_jobs.rb`).
require_relative "jobs"

# Fails while the Redis key `web:fail` is set, and is retried only an hour
# later, so its retry entry waits until the dashboard's "Retry Now"; once the
# key is gone it records what it received (like RecordJob).
class WebFlakyJob
  include Sidekiq::Job
  include BridgeRecording
  sidekiq_options retry: 5, backtrace: true
  sidekiq_retry_in { |_count, _exception| 3600 }

  def perform(*args)
    raise ArgumentError, "web flaky failure: #{args.inspect}" if Bridge.redis { |r| r.get("web:fail") }
    record(args)
  end
end

# Straight to the Dead set.
class WebDeadJob
  include Sidekiq::Job
  sidekiq_options retry: 0, backtrace: true

  def perform(*args)
    raise RuntimeError, "web dead failure <script>alert('dead')</script>"
  end
end
