class ApplicationJob < ActiveJob::Base
  # What a job saw, for the tests to read back through Redis.
  def report(fields)
    Sidekiq.redis { |r| r.rpush("shop:performed", JSON.generate({job: self.class.name, job_id: job_id, queue: queue_name, executions: executions}.merge(fields))) }
  end
end
