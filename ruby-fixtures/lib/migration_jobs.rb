# Job classes for the migration tests (interop-tests/migration.test.ts): the
# same classes exist as Node handlers there, so either side can run them.
# Every run records {class, jid, queue, side, pid, at} in the Redis list `mig:runs`.
require_relative "jobs"

module MigrationRecording
  def record_run(extra = {})
    queue = (Thread.current[:bridge_job] || {})["queue"]
    entry = {"class" => self.class.name, "jid" => jid, "queue" => queue, "side" => "ruby", "pid" => Process.pid, "at" => Time.now.to_f}.merge(extra)
    Bridge.redis { |r| r.rpush("mig:runs", JSON.generate(entry)) }
  end
end

# A plain job; `ms` slows it down so a queue does not drain at once.
class MigXJob
  include Sidekiq::Job
  include MigrationRecording
  def perform(_seq, ms = 0)
    sleep(ms / 1000.0) if ms > 0
    record_run
  end
end

class MigYJob
  include Sidekiq::Job
  include MigrationRecording
  def perform(_seq, ms = 0)
    sleep(ms / 1000.0) if ms > 0
    record_run
  end
end

# Fails on its first attempt (whichever side runs it), succeeds on the next;
# retried after 1 second, so its retry comes due within the test.
class MigFlakyJob
  include Sidekiq::Job
  include MigrationRecording
  sidekiq_options retry: 3
  sidekiq_retry_in { |_count, _exception| 1 }
  def perform(_seq)
    first = Bridge.redis { |r| r.sadd("mig:failed-once", jid) }
    first = first == 1 if first.is_a?(Integer)
    if first
      queue = (Thread.current[:bridge_job] || {})["queue"]
      Bridge.redis { |r| r.rpush("mig:failures", JSON.generate({"jid" => jid, "queue" => queue, "side" => "ruby", "at" => Time.now.to_f})) }
      raise "first attempt of #{jid} fails on purpose"
    end
    record_run
  end
end
