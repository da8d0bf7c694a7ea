# The soak's Ruby side: chaos_jobs.rb, plus a line in the file SOAK_EVENTS for
# what this process does with each job (started, finished, raised, pushed by
# the scheduled poller, an error Sidekiq reported). A file and not Redis, so
# the record survives Redis being down, which is when jobs go missing.
require_relative "chaos_jobs"

module SoakEvents
  LOCK = Mutex.new
  FILE = File.open(ENV.fetch("SOAK_EVENTS"), "a").tap { |f| f.sync = true }

  def self.write(*fields)
    line = ([(Time.now.to_f * 1000).round, Process.pid] + fields.map { |f| f.to_s.tr(" \n", "_")[0, 160] }).join(" ")
    LOCK.synchronize { FILE.write("#{line}\n") }
  end
end

class SoakServerEvents
  def call(_instance, job, queue)
    SoakEvents.write("start", job["jid"], job["class"], queue)
    yield
    SoakEvents.write("done", job["jid"])
  rescue Exception => e # rubocop:disable Lint/RescueException -- recorded, then re-raised
    SoakEvents.write("raised", job["jid"], e.class.name, e.message)
    raise
  end
end

# In the server process this sees the scheduled poller's pushes (and requeues do not pass here).
class SoakClientEvents
  def call(_klass, job, queue, _pool)
    SoakEvents.write("push", job["jid"], job["class"], queue)
    result = yield
    SoakEvents.write("pushed", job["jid"])
    result
  rescue Exception => e # rubocop:disable Lint/RescueException -- recorded, then re-raised
    SoakEvents.write("push-failed", job["jid"], e.class.name, e.message)
    raise
  end
end

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add SoakServerEvents }
  config.client_middleware { |chain| chain.add SoakClientEvents }
  config.error_handlers << proc { |ex, ctx|
    job = ctx[:job] || {}
    SoakEvents.write("error", job["jid"] || "-", ctx[:context] || "-", ex.class.name, ex.message)
  }
  config.on(:startup) { SoakEvents.write("startup", "-") }
  config.on(:quiet) { SoakEvents.write("quiet", "-") }
  config.on(:shutdown) { SoakEvents.write("shutdown", "-") }
end
