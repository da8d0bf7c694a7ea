# sidekiq-unique-jobs (8.x or 9.x, whichever RUBYLIB names) installed as its
# README says, with job classes for each lock type. Jobs record what they ran
# in `bridge:received` like RecordJob. The reaper is off: tests run it.
require_relative "jobs"
require "sidekiq-unique-jobs"

SidekiqUniqueJobs.configure do |config|
  config.reaper = :none
  config.digest_algorithm = ENV.fetch("BRIDGE_UJ_DIGEST", "legacy").to_sym
end

Sidekiq.configure_client do |config|
  config.client_middleware { |chain| chain.add SidekiqUniqueJobs::Middleware::Client }
end

Sidekiq.configure_server do |config|
  config.client_middleware { |chain| chain.add SidekiqUniqueJobs::Middleware::Client }
  config.server_middleware { |chain| chain.add SidekiqUniqueJobs::Middleware::Server }
  SidekiqUniqueJobs::Server.configure(config)
end

# A unique job: args[0] may ask it to sleep ("sleep:<s>") or fail ("fail").
module UniqueBehaviour
  def perform(*args)
    cmd = args.first.to_s
    sleep cmd.split(":")[1].to_f if cmd.start_with?("sleep:")
    raise ArgumentError, "unique fixture failure" if cmd == "fail"
    record(args)
  end
end

{
  "UntilExecutedJob" => {lock: :until_executed},
  "UntilExecutingJob" => {lock: :until_executing},
  "WhileExecutingJob" => {lock: :while_executing, lock_timeout: 0},
  "WhileExecutingRaiseJob" => {lock: :while_executing, on_conflict: :raise},
  "UntilAndWhileExecutingJob" => {lock: :until_and_while_executing},
  "UntilExpiredJob" => {lock: :until_expired, lock_ttl: 30},
  "UntilExecutedRejectJob" => {lock: :until_executed, on_conflict: :reject},
  "UntilExecutedLogJob" => {lock: :until_executed, on_conflict: :log},
  "UntilExecutedRaiseJob" => {lock: :until_executed, on_conflict: :raise},
  "UntilExecutedTtlJob" => {lock: :until_executed, lock_ttl: 120},
  "DyingUniqueJob" => {lock: :until_executed, retry: 0},
  "DroppedUniqueJob" => {lock: :until_executed, retry: false}
}.each do |name, opts|
  klass = Class.new do
    include Sidekiq::Job
    include BridgeRecording
    include UniqueBehaviour
    sidekiq_options(**opts, queue: "uq")
  end
  Object.const_set(name, klass)
end

# The gem's own view of its locks, for the tests.
module UniqueState
  def self.digests
    SidekiqUniqueJobs::Digests.new.entries.keys.sort
  end

  def self.locked?(klass, args, queue: "uq", jid: nil)
    item = {"class" => klass, "queue" => queue, "args" => args, "jid" => jid, "lock" => Object.const_get(klass).get_sidekiq_options["lock"].to_s}
    SidekiqUniqueJobs::Job.prepare(item)
    SidekiqUniqueJobs::Locksmith.new(item).locked?
  end

  def self.digest_of(klass, args, queue: "uq")
    item = {"class" => klass, "queue" => queue, "args" => args}
    SidekiqUniqueJobs::Job.prepare(item)
    item["lock_digest"]
  end

  # Every lock key the gem wrote, by type, plus the changelog's messages in
  # order. Left out: the version markers a Ruby server writes when it boots,
  # gem 9's per-minute metrics, and gem 8's unlock wake-up signal (a QUEUED
  # list holding only "1", expiring 5 s after the unlock, so present or not
  # depending on when one looks).
  def self.snapshot
    Sidekiq.redis do |r|
      keys = r.call("KEYS", "uniquejobs*").sort.reject do |k|
        k.start_with?("uniquejobs:live", "uniquejobs:dead", "uniquejobs:metrics") ||
          (k.end_with?(":QUEUED") && r.call("LRANGE", k, 0, -1) == ["1"])
      end
      {
        "keys" => keys.to_h { |k| [k, r.call("TYPE", k)] },
        "changelog" => (r.call("ZRANGE", "uniquejobs:changelog", 0, -1) || []).map { |e| JSON.parse(e).slice("script", "message") }
      }
    end
  end
end
