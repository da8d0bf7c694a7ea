# Ruby's side of the unique-jobs network scenario (chaos/unique-lock-scenarios.ts):
# the classes chaos/unique-handlers.mjs registers, declared as the pushes in
# chaos/unique-lock-workload.ts lock them (the lock covers args[0]; runtime
# locks reschedule on conflict), run by the gem's own server middleware
# (unique_jobs.rb). Each run records its start and end in the ledger Redis
# (CHAOS_LEDGER_URL, straight, not through the fault) exactly as Node's
# handlers do: {"t":"S",key,copy,jid,pid,token,at} then {"t":"E",token,at}.
require_relative "unique_jobs"
require "securerandom"

$stdout.sync = true

module UniqueLedger
  LEDGER = Sidekiq::RedisConnection.create(url: ENV.fetch("CHAOS_LEDGER_URL"), size: 10)

  def self.record(entry)
    entry[:at] = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
    LEDGER.with { |r| r.call("RPUSH", "uj:ledger", JSON.generate(entry)) }
  end

  def perform(key, copy, ms)
    token = SecureRandom.hex(4)
    UniqueLedger.record({t: "S", key: key, copy: copy, jid: jid, pid: Process.pid, token: token})
    sleep(ms / 1000.0)
    UniqueLedger.record({t: "E", token: token})
  end
end

# The two cases where Node's worker logs "the job was not run" (src/addons/sidekiq-unique-jobs/server.ts);
# the gem only reflects them: until_executed finding its lock taken, and
# until_and_while_executing failing to release its queue lock. Printed with
# the same words, so the scenario counts both sides alike.
SidekiqUniqueJobs.reflect do |on|
  on.execution_failed do |item, error = nil|
    puts "sidekiq-unique-jobs execution_failed #{item["jid"]}: the job was not run" if item["lock"] == "until_executed" && error.nil?
  end
  on.unlock_failed do |item|
    if item["lock"] == "until_and_while_executing" && !item["lock_digest"].end_with?(":RUN")
      puts "sidekiq-unique-jobs unlock_failed #{item["jid"]}: the job was not run"
    end
  end
end

RESCHEDULE = {client: :log, server: :reschedule}.freeze
{
  "UJUntilExecuted" => {lock: :until_executed},
  "UJWhileExecuting" => {lock: :while_executing, on_conflict: RESCHEDULE},
  "UJUntilAndWhile" => {lock: :until_and_while_executing, on_conflict: RESCHEDULE}
}.each do |name, opts|
  klass = Class.new do
    include Sidekiq::Job
    include UniqueLedger
    sidekiq_options(**opts, queue: "uq")

    # The gem's lock_args hook (used when the class defines it): the key only.
    def self.lock_args(args) = [args[0]]
  end
  Object.const_set(name, klass)
end
