# Job classes loaded by a real `sidekiq` server (`sidekiq -r .../lib/jobs.rb`).
# Each records exactly what it received in the Redis list `bridge:received`.
require_relative "bridge"

# The raw job hash of the job being performed, for jobs that report it.
class BridgeCaptureMiddleware
  def call(_job_instance, job, _queue)
    Thread.current[:bridge_job] = job
    yield
  ensure
    Thread.current[:bridge_job] = nil
  end
end

Sidekiq.configure_server do |config|
  # poll_interval_average (not average_scheduled_poll_interval) also skips the
  # poller's 10 s initial wait, so tests see scheduled work within seconds.
  poll = ENV.fetch("BRIDGE_POLL_INTERVAL", "1").to_f
  if Bridge::SIDEKIQ_7
    config[:poll_interval_average] = poll
  else
    Sidekiq.options[:poll_interval_average] = poll
  end
  config.server_middleware { |chain| chain.add BridgeCaptureMiddleware }
end

module BridgeRecording
  def record(args)
    job = Thread.current[:bridge_job] || {}
    entry = {
      "class" => self.class.name,
      "jid" => jid,
      "args_typed" => Bridge.typed(args),
      "args_json" => JSON.generate(args),
      "job" => job,
      "performed_at" => Time.now.to_f,
      "pid" => Process.pid
    }
    Bridge.redis { |r| r.lpush("bridge:received", JSON.generate(entry)) }
  end
end

class RecordJob
  include Sidekiq::Job
  include BridgeRecording
  def perform(*args) = record(args)
end

class FailJob
  include Sidekiq::Job
  sidekiq_options retry: 1, backtrace: true
  def perform(*args)
    raise ArgumentError, "bridge fixture failure: #{args.inspect}"
  end
end

class SlowJob
  include Sidekiq::Job
  include BridgeRecording
  def perform(seconds, *rest)
    sleep seconds
    record([seconds, *rest])
  end
end

# ActiveJob, where the root filesystem has it (forky: Rails 7.2).
begin
  require "active_job"
  # Sidekiq ships its own adapter (7.3.3+); prefer it over Rails' older copy.
  own = File.join(File.dirname($LOADED_FEATURES.grep(%r{/sidekiq\.rb\z}).first.to_s), "active_job/queue_adapters/sidekiq_adapter.rb")
  # 7.3.3-7.3.x: that adapter subclasses Sidekiq::ActiveJob::Wrapper, which
  # sidekiq/rails.rb defines beside its Rails engine; with no railties in these
  # root filesystems, the wrapper is defined here as that file does.
  source = File.exist?(own) ? File.read(own) : ""
  if source.include?("< Sidekiq::ActiveJob::Wrapper") && !source.match?(/^\s*class Wrapper$/)
    module Sidekiq::ActiveJob
      class Wrapper
        include Sidekiq::Job
        def perform(job_data) = ::ActiveJob::Base.execute(job_data.merge("provider_job_id" => jid))
      end
    end
  end
  File.exist?(own) ? require(own) : require("active_job/queue_adapters/sidekiq_adapter")
  ActiveJob::Base.queue_adapter = :sidekiq
  ActiveJob::Base.logger = Logger.new(nil)

  class AjRecordJob < ActiveJob::Base
    queue_as :default
    def perform(*args, **kw)
      entry = {
        "class" => self.class.name,
        "job_id" => job_id,
        "jid" => provider_job_id,
        "args_typed" => Bridge.typed(args),
        "kw_typed" => Bridge.typed(kw),
        "performed_at" => Time.now.to_f
      }
      Bridge.redis { |r| r.lpush("bridge:received", JSON.generate(entry)) }
    end
  end
rescue LoadError
  # No ActiveJob in this root filesystem (bookworm, trixie).
end
