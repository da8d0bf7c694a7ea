# Ruby's side of the Retry All network scenario: the Web UI's action
# (RetrySet#retry_all) through REDIS_URL (the fault proxy), with Sidekiq's own
# timeouts and retry. Prints "<ms> ok|<error class>: <message>".
require_relative "bridge"

t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :millisecond)
outcome =
  begin
    Sidekiq::RetrySet.new.retry_all
    "ok"
  rescue => e
    "#{e.class.name}: #{e.message}"
  end
puts "#{Process.clock_gettime(Process::CLOCK_MONOTONIC, :millisecond) - t0} ms #{outcome}"
