# The Ruby client's side of a network scenario: pushes one ChaosJob every 50 ms
# through REDIS_URL (the fault proxy) for PUSH_SECONDS, and prints one line
# per push: "<start ms> <settle ms> ok|<error class>". Sidekiq's own client,
# with its own timeouts and retry.
require_relative "bridge"

deadline = Time.now + Float(ENV.fetch("PUSH_SECONDS"))
while Time.now < deadline
  t0 = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  outcome =
    begin
      Sidekiq::Client.push("class" => "ChaosJob", "queue" => "netpush", "args" => [0])
      "ok"
    rescue => e
      e.class.name
    end
  t1 = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  puts "#{t0} #{t1 - t0} #{outcome}"
  $stdout.flush
  sleep 0.05
end
