# Ruby Sidekiq's side of `npm run bench:ops`, run inside the forky root
# filesystem (Sidekiq 8.1.7) against the bench's Redis: each Web UI page
# rendered in-process with Rack::MockRequest (as the interop tests' oracle
# does), the API calls an operator's CLI makes, and optionally retry_all.
# Prints one JSON line: times in ms, page bytes, the Redis work of one render
# (INFO commandstats: calls and usec), and this process's peak RSS (VmHWM).
#
#   OPS_PATHS='["/busy", ...]' OPS_RUNS=5 OPS_PAGE_BUDGET_S=30 OPS_MODE=pages|api|retry_all ruby ruby-ops.rb
require "json"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/web"
require "rack/mock"

def now_ms = Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_millisecond)

def peak_rss_kb = File.read("/proc/self/status")[/VmHWM:\s+(\d+)/, 1].to_i

def redis_work
  Sidekiq.redis { |c| c.call("CONFIG", "RESETSTAT") }
  yield
  stats = Sidekiq.redis { |c| c.call("INFO", "commandstats") }
  calls = 0
  usec = 0
  stats.each_line do |l|
    m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.match(l) or next
    next if %w[info config config|resetstat].include?(m[1])
    calls += m[2].to_i
    usec += m[3].to_i
  end
  {"calls" => calls, "usec" => usec}
end

# Runs the block `runs` times (after a warm-up) or until `budget_s` is spent (at least once).
def timed(runs, budget_s)
  result = nil
  work = redis_work { result = yield } # the warm-up, with the Redis work of one call
  times = []
  started = now_ms
  runs.times do
    t = now_ms
    yield
    times << now_ms - t
    break if now_ms - started > budget_s * 1000
  end
  times.sort!
  {"median_ms" => times[times.size / 2], "runs" => times.size, "work" => work, "result" => result}
end

runs = Integer(ENV.fetch("OPS_RUNS", "5"))
budget = Float(ENV.fetch("OPS_PAGE_BUDGET_S", "30"))
out = {"sidekiq" => Sidekiq::VERSION, "ruby" => RUBY_VERSION}

case ENV.fetch("OPS_MODE", "pages")
when "pages"
  app = Rack::MockRequest.new(Sidekiq::Web.new)
  out["pages"] = JSON.parse(ENV.fetch("OPS_PATHS")).to_h do |path|
    r = timed(runs, budget) do
      res = app.get(path, "rack.session" => {})
      raise "#{path}: HTTP #{res.status}: #{res.body[0, 300]}" unless res.status == 200
      res.body.bytesize
    end
    r["bytes"] = r.delete("result")
    [path, r]
  end
when "api"
  klass = ENV.fetch("OPS_CLASS")
  calls = {
    "stats" => -> {
      s = Sidekiq::Stats.new
      [s.processed, s.failed, s.enqueued, s.workers_size, s.retry_size, s.dead_size, s.scheduled_size, s.default_queue_latency, s.queues.size]
    },
    "processes" => -> { Sidekiq::ProcessSet.new.to_a.size },
    "processes --work" => -> { Sidekiq::WorkSet.new.to_a.size },
    "retries list" => -> { Sidekiq::RetrySet.new.first(25).size },
    "retries list --class" => -> { Sidekiq::RetrySet.new.lazy.select { |e| e.display_class == klass }.first(25).size }
  }
  out["api"] = calls.to_h do |name, fn|
    r = timed(runs, budget) { fn.call }
    r.delete("result")
    [name, r]
  end
when "retry_all"
  size = Sidekiq::RetrySet.new.size
  t = now_ms
  Sidekiq::RetrySet.new.retry_all
  out["retry_all"] = {"entries" => size, "ms" => now_ms - t, "left" => Sidekiq::RetrySet.new.size}
end
out["peak_rss_kb"] = peak_rss_kb
puts "__OPS_RESULT__ #{JSON.generate(out)}"
