# The release sweep's Ruby side (interop-tests/release-sweep.test.ts): each
# check runs through the loaded release's own code, many in one process.
require_relative "bridge"
require "sidekiq/capsule" if Bridge::SIDEKIQ_7
require "sidekiq/job_retry"

# A job whose retries end in :discard (7.2.0+; before, the answer is ignored).
class SweepDiscardJob
  include Sidekiq::Job
  sidekiq_retries_exhausted { |_job, _ex| :discard }
end

# sidekiq_retry_in answers: a Float (6.5.2 falls back to the default; 7.0.7 truncates) and :discard (6.5.2+).
class SweepFloatDelayJob
  include Sidekiq::Job
  sidekiq_retry_in { |_count, _ex| 30.7 }
end

class SweepDiscardInJob
  include Sidekiq::Job
  sidekiq_retry_in { |_count, _ex| :discard }
end

class SweepPlainJob
  include Sidekiq::Job
end

module Sweep
  DEATHS = []

  def self.config
    Bridge::SIDEKIQ_7 ? Sidekiq.default_configuration : Sidekiq
  end

  # A setting, where each release keeps it (6.4: Sidekiq.options; 6.5: Sidekiq[]; 7+: the configuration).
  def self.set(key, value)
    if Bridge::SIDEKIQ_7 then Sidekiq.default_configuration[key] = value
    elsif Sidekiq.respond_to?(:[]=) then Sidekiq[key] = value
    else Sidekiq.options[key] = value
    end
  end

  def self.retrier
    r = if Bridge::SIDEKIQ_7 then Sidekiq::JobRetry.new(Sidekiq.default_configuration.default_capsule)
    elsif Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("6.5") then Sidekiq::JobRetry.new(Sidekiq) # 6.5: the module is the configuration
    else Sidekiq::JobRetry.new # 6.4: options default to Sidekiq.options
    end
    # The largest jitter the release's own formula can draw: rand(n) answers n - 1.
    r.define_singleton_method(:rand) { |n = 0| (n.is_a?(Integer) && n > 0) ? n - 1 : 0 }
    r
  end

  def self.member(key, jid)
    all = Bridge.redis { |r| Bridge::SIDEKIQ_7 ? r.zrange(key, 0, -1, "withscores") : r.zrange(key, 0, -1, withscores: true) }
    all.find { |m, _| m.include?(%("jid":"#{jid}")) }
  end

  # Fails each case's job once through the release's JobRetry, as its
  # processor does: where the job went, the delay to its retry, and what the
  # death handlers saw.
  def self.fail_cases(cases)
    config.death_handlers << ->(job, _ex) { DEATHS << {"jid" => job["jid"], "discarded_at" => job.key?("discarded_at")} }
    cases.to_h do |c|
      job = JSON.parse(c["payload"])
      inst = Object.const_get(job["class"]).new
      inst.jid = job["jid"]
      t0 = Time.now.to_f
      begin
        r = retrier
        # As the processor nests them: what escapes #local (6.4's Symbol#to_i) is retried by #global.
        r.global(c["payload"], job["queue"]) { r.local(inst, c["payload"], job["queue"]) { raise ArgumentError, "sweep failure" } }
      rescue Sidekiq::JobRetry::Handled # the retrier took it (Skip is a Handled)
      end
      retry_entry = member("retry", job["jid"])
      outcome = retry_entry ? "retry" : member("dead", job["jid"]) ? "dead" : "discarded"
      death = DEATHS.find { |d| d["jid"] == job["jid"] }
      [c["name"], {"outcome" => outcome, "delay" => retry_entry && (retry_entry[1] - t0),
                   "death" => !!death, "discardedAt" => death ? death["discarded_at"] : false}]
    end
  end

  # What this release's RetrySet reads of an entry Node wrote.
  def self.retry_view(jid)
    e = Sidekiq::RetrySet.new.find_job(jid)
    return nil unless e
    {"count" => e["retry_count"], "errorClass" => e["error_class"], "message" => e["error_message"],
     "failedAtClass" => e["failed_at"].class.name, "backtrace" => e.error_backtrace,
     "rawBacktraceHasNewline" => e["error_backtrace"].to_s.include?("\n"), "queue" => e.queue,
     "args" => JSON.generate(e.args)}
  end
end
