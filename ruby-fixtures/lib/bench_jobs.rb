# Benchmark fixtures for `npm run bench` (bench/README.md). Two uses:
#
#   sidekiq -r lib/bench_jobs.rb -q bench -c N     a real Sidekiq server whose
#       only job, BenchNoopJob, counts itself and reports when the expected
#       number has run;
#   ruby lib/bench_jobs.rb client                  Sidekiq's own client
#       (push_bulk, perform_async) for the enqueue scenarios.
#
# Both speak bench/lib/protocol.ts's line protocol: one JSON command per stdin
# line from the harness, answers as `__BENCH__ {json}` lines on stdout.
# Not loaded by lib/jobs.rb: no capture middleware, no 1 s poll interval.
require_relative "bridge"

module BenchProtocol
  MARK = "__BENCH__ "
  OUT = Mutex.new

  def self.emit(msg)
    line = MARK + JSON.generate(msg) + "\n"
    OUT.synchronize do
      $stdout.write(line)
      $stdout.flush
    end
  end

  # Epoch milliseconds, sub-millisecond resolution (the Node side's performance.timeOrigin + now()).
  def self.now_ms = Process.clock_gettime(Process::CLOCK_REALTIME, :float_millisecond)

  # CPU time of the whole process (all threads), microseconds.
  def self.cpu_us = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :float_microsecond)

  def self.each_command
    $stdin.each_line do |line|
      line = line.strip
      yield JSON.parse(line) unless line.empty?
    end
  end
end

# The no-op job's only work: count, and note start - enqueue in latency mode.
module BenchCounter
  LOCK = Mutex.new
  @expect = 0
  @count = 0
  @latency = false
  @samples = []

  def self.arm(n, latency)
    LOCK.synchronize do
      @expect = n
      @count = 0
      @latency = latency
      @samples = []
    end
    BenchProtocol.emit(type: "armed", cpuUs: BenchProtocol.cpu_us)
  end

  def self.tick(arg)
    t = BenchProtocol.now_ms
    LOCK.synchronize do
      @samples << (t - arg) if @latency && arg.is_a?(Numeric)
      @count += 1
      if @count == @expect
        msg = {type: "done", t: t, count: @count, cpuUs: BenchProtocol.cpu_us}
        msg[:latencies] = @samples if @latency
        BenchProtocol.emit(msg)
      end
    end
  end
end

class BenchNoopJob
  include Sidekiq::Job
  sidekiq_options queue: "bench"

  def perform(arg = nil) = BenchCounter.tick(arg)
end

if Sidekiq.server?
  Sidekiq.configure_server do |config|
    # Only the scheduled-burst scenario sets it (the same value for sidekiq-bridge).
    config[:poll_interval_average] = Float(ENV["BENCH_POLL"]) if ENV["BENCH_POLL"]
    config.on(:startup) do
      Thread.new do
        BenchProtocol.each_command do |cmd|
          case cmd["op"]
          when "expect" then BenchCounter.arm(cmd["n"], cmd["latency"])
          when "exit" then break
          end
        end
        # Stdin closed or "exit": shut down as on TERM.
        Process.kill("TERM", Process.pid)
      end
      BenchProtocol.emit(type: "ready", pid: Process.pid, runtime: RUBY_DESCRIPTION)
    end
  end
end

if $PROGRAM_NAME == __FILE__ && ARGV[0] == "client"
  pool = Integer(ENV.fetch("BENCH_POOL", "50"))
  Sidekiq.configure_client { |c| c.redis = {url: ENV.fetch("REDIS_URL"), size: pool} }
  Sidekiq.redis { |c| c.call("PING") }
  BenchProtocol.emit(type: "ready", pid: Process.pid, runtime: RUBY_DESCRIPTION)

  BenchProtocol.each_command do |cmd|
    n = cmd["n"]
    c0 = BenchProtocol.cpu_us
    case cmd["op"]
    when "exit" then break
    when "bulk"
      args = Array.new(n) { |i| [i] }
      t0 = BenchProtocol.now_ms
      Sidekiq::Client.push_bulk("class" => BenchNoopJob, "args" => args, "batch_size" => cmd["batch"])
      ms = BenchProtocol.now_ms - t0
      BenchProtocol.emit(type: "result", ms: ms, n: n, cpuUs: BenchProtocol.cpu_us - c0)
    when "single"
      k = [cmd["inflight"], n].min
      t0 = BenchProtocol.now_ms
      if k <= 1
        n.times { |i| BenchNoopJob.perform_async(i) }
      else
        # k threads, each with its own pooled connection: k pushes in flight.
        Array.new(k) { |lane|
          Thread.new do
            i = lane
            while i < n
              BenchNoopJob.perform_async(i)
              i += k
            end
          end
        }.each(&:join)
      end
      ms = BenchProtocol.now_ms - t0
      BenchProtocol.emit(type: "result", ms: ms, n: n, cpuUs: BenchProtocol.cpu_us - c0)
    when "paced"
      interval = 1000.0 / cmd["rate"]
      t0 = BenchProtocol.now_ms
      late = 0.0
      n.times do |i|
        due = t0 + i * interval
        wait = due - BenchProtocol.now_ms
        sleep(wait / 1000.0) if wait >= 1
        t = BenchProtocol.now_ms
        late = t - due
        BenchNoopJob.perform_async(t)
      end
      ms = BenchProtocol.now_ms - t0
      BenchProtocol.emit(type: "result", ms: ms, n: n, cpuUs: BenchProtocol.cpu_us - c0, lateMs: late)
    end
  end
end
