# The release sweep's Ruby side (interop-tests/release-sweep.test.ts): each
# check runs through the loaded release's own code, many in one process.
require_relative "bridge"
require "sidekiq/scheduled"
require "stringio"

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

  def self.retrier
    r = Bridge.job_retry
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

  # Client, API and poller rules as this release's own code shows them; the
  # test did the same with Node (`node_later` is Node's scheduled push).
  def self.rules_view(node_later)
    out = {}
    Bridge.redis { |r| r.del("process_cleanup") }
    Sidekiq::ProcessSet.new # cleans up on creation, under the lock from 6.5.2
    out["cleanupLock"] = Bridge.redis { |r| r.exists("process_cleanup") } == 1
    before = Time.now.to_f
    out["latencyNoEnqueued"] = Sidekiq::Queue.new("sweep-noenq").latency
    out["latencyWindow"] = [before, Time.now.to_f]
    jid = Sidekiq::Client.push("class" => "RecordJob", "queue" => "sweep-later", "args" => [1],
      "at" => Time.now.to_f + 600, "enqueued_at" => 1_700_000_000.0)
    out["scheduledKeepsEnqueuedAt"] = [jid, node_later].map { |j| JSON.parse(member("schedule", j)[0]).key?("enqueued_at") }
    out["strictArgs"] = begin
      RecordJob.set(queue: "sweep-strict").perform_async(Time.at(0))
      "pushed"
    rescue ArgumentError
      "raised"
    end
    poller = Sidekiq::Scheduled::Poller.allocate
    poller.instance_variable_set(:@config, config)
    poller.define_singleton_method(:process_count) { 12 }
    half = Object.new.tap { |o| o.define_singleton_method(:rand) { |*| 0.5 } }
    poller.define_singleton_method(:rand) { |*| 0.5 }
    poller.instance_variable_set(:@rnd, half) # 8.1: a Random of its own
    out["pollInterval12"] = poller.send(:random_poll_interval)
    out
  end

  # The Node process (tagged `tag`) and this release's own, as its API, its
  # Redis hash and its Web UI's /busy show them.
  def self.heartbeat_view(tag)
    require "sidekiq/web"
    require "rack/mock"
    all = Sidekiq::ProcessSet.new.to_a
    node = all.find { |p| p["tag"] == tag }
    ruby = all.find { |p| p["tag"] != tag }
    raw = ->(p) {
      Bridge.redis { |r| {"fields" => r.hkeys(p.identity).sort, "info" => JSON.parse(r.hget(p.identity, "info")).keys.sort} }
    }
    works = defined?(Sidekiq::WorkSet) ? Sidekiq::WorkSet.new : Sidekiq::Workers.new
    work = works.map { |_, _, w|
      payload = w.respond_to?(:payload) ? w.payload : w["payload"]
      (payload.is_a?(String) ? JSON.parse(payload) : payload)["jid"]
    }
    res = Rack::MockRequest.new(Sidekiq::Web.new).get("/busy", "rack.session" => {})
    {"node" => node.instance_variable_get(:@attribs), "ruby" => ruby.instance_variable_get(:@attribs),
     "nodeRaw" => raw.(node), "rubyRaw" => raw.(ruby), "work" => work, "busy" => res.status, "body" => res.body,
     "sidekiqmon" => sidekiqmon}
  end

  # What this release's own bin/sidekiqmon prints (`sidekiqmon processes`),
  # run in this process: the script sits beside the lib/ that was loaded
  # (the release's folder, or Debian's gem directory).
  def self.sidekiqmon
    lib = File.dirname($LOADED_FEATURES.grep(%r{/sidekiq\.rb\z}).first)
    out = StringIO.new
    argv = ARGV.dup
    $stdout = out
    ARGV.replace(["processes"])
    load File.expand_path("../bin/sidekiqmon", lib)
    out.string
  ensure
    ARGV.replace(argv)
    $stdout = STDOUT
  end

  # An IterableJob Node is running (7.3+): the cursor and executions this
  # release's own resume reads from the state Node saved, and its cancel!
  # where it has one (7.3.3+).
  def self.iteration_view(jid)
    require File.join(__dir__, "iterable_jobs")
    job = BridgeIterableJob.new
    job.jid = jid
    job.send(:fetch_previous_iteration_state)
    can = Sidekiq::Client.method_defined?(:cancel!)
    Sidekiq::Client.new.cancel!(jid) if can
    {"cursor" => job.instance_variable_get(:@_cursor), "executions" => job.instance_variable_get(:@_executions),
     "canCancel" => can}
  end
end
