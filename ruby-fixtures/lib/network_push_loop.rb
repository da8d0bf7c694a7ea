# The Ruby client's side of a network scenario: pushes one ChaosJob every 50 ms
# (or PUSH_BULK of them in one push_bulk) through REDIS_URL (the fault proxy)
# for PUSH_SECONDS, and prints one line per push: "<start ms> <settle ms>
# ok|<error class>". Sidekiq's own client, with its own timeouts and retry.
require_relative "bridge"

deadline = Time.now + Float(ENV.fetch("PUSH_SECONDS"))
bulk = Integer(ENV.fetch("PUSH_BULK", "0"))
while Time.now < deadline
  t0 = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  outcome =
    begin
      if bulk > 0
        Sidekiq::Client.push_bulk("class" => "ChaosJob", "queue" => "netpush", "args" => Array.new(bulk) { [0] })
      else
        Sidekiq::Client.push("class" => "ChaosJob", "queue" => "netpush", "args" => [0])
      end
      "ok"
    rescue => e
      e.class.name
    end
  t1 = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond)
  puts "#{t0} #{t1 - t0} #{outcome}"
  $stdout.flush
  sleep 0.05
end
