# The Ruby side of the differential fuzzer (chaos/fuzz/): real Sidekiq does
# the operation, on thousands of cases per process (a Ruby boot in a chroot
# costs 1-2 s). Reads one JSON request on stdin, {"steps": [...]}, runs each
# step on the Redis it names and prints one JSON array of step results after
# the marker line. Steps:
#   write:   each case text -> Ruby's own bytes (JSON.generate(JSON.parse(text)))
#            and, on those bytes, JobRetry#global failure, DeadSet#kill,
#            SortedEntry#retry, SortedEntry#add_to_queue and Scheduled::Enq#enqueue_jobs,
#            each with what it left in Redis and the clock around it
#   push:    each case text -> Sidekiq::Client.push of the parsed hash
#   views:   every job of the named queues (and sorted sets) as Sidekiq's API reads it
#   webui:   the Web UI's page of each named queue (Rack::MockRequest)
require_relative "../lib/bridge"
require_relative "canon"
require "cgi"
require "sidekiq/scheduled"
require "sidekiq/capsule" if Bridge::SIDEKIQ_7
require "sidekiq/job_retry"

module FuzzOracle
  module_function

  def use_redis(url)
    return unless url
    if Bridge::SIDEKIQ_7
      Thread.current[:sidekiq_redis_pool] = (@pools ||= {})[url] ||= Sidekiq::RedisConnection.create(url: url)
    else
      Sidekiq.redis = {url: url}
    end
  end

  def retrier
    Bridge::SIDEKIQ_7 ? Sidekiq::JobRetry.new(Sidekiq.default_configuration.default_capsule) : Sidekiq::JobRetry.new
  end

  def enq
    Bridge::SIDEKIQ_7 ? Sidekiq::Scheduled::Enq.new(Sidekiq.default_configuration) : Sidekiq::Scheduled::Enq.new
  end

  def canon(v) = FuzzCanon.canon(v)

  def time_view(t)
    t && [t.to_i, t.nsec]
  end

  def zset(conn, key)
    conn.zrange(key, 0, -1, withscores: true).map { |m, s| [m, s.to_s] }
  end

  # Every queue's contents (exact bytes), then emptied: what an operation pushed.
  def drain_queues(conn)
    out = conn.smembers("queues").sort.map { |q| [q, conn.lrange("queue:#{q}", 0, -1)] }
    conn.del("queues", *conn.smembers("queues").map { |q| "queue:#{q}" })
    out
  end

  # The exception a block raised, as "Class: message", or nil.
  def raised
    yield
    nil
  rescue => e
    "#{e.class}: #{e.message[0, 200]}"
  end

  def clocked
    t0 = Time.now.to_f
    r = begin
      yield
    rescue => e
      {"error" => "#{e.class}: #{e.message[0, 200]}"}
    end
    r.merge("t0" => t0, "t1" => Time.now.to_f)
  end

  def fail_once(bytes, queue)
    clocked do
      raised = nil
      begin
        retrier.global(bytes, queue) { raise ArgumentError, "fuzz failure" }
      rescue Sidekiq::JobRetry::Handled
        nil
      rescue => e
        raised = e.class.name
      end
      Bridge.redis do |c|
        r = {"retry" => zset(c, "retry"), "dead" => zset(c, "dead"), "raised" => raised}
        c.del("retry", "dead")
        r
      end
    end
  end

  def kill(bytes)
    clocked do
      Sidekiq::DeadSet.new.kill(bytes)
      Bridge.redis do |c|
        r = {"dead" => zset(c, "dead")}
        c.del("dead")
        r
      end
    end
  end

  # Stores the bytes in `set`, runs the operation, and returns what it pushed
  # and what it left in the set (a push that raised has taken the member out already).
  def move_from(set, bytes, score)
    clocked do
      Bridge.redis { |c| c.zadd(set, score, bytes) }
      error = raised { yield }
      Bridge.redis do |c|
        r = {"queues" => drain_queues(c), set => zset(c, set)}
        c.del(set)
        error ? r.merge("error" => error) : r
      end
    end
  end

  def requeue(bytes, action, score)
    move_from("retry", bytes, score) do
      entry = Sidekiq::SortedEntry.new(Sidekiq::RetrySet.new, score, bytes)
      action == "retry" ? entry.retry : entry.add_to_queue
    end
  end

  def promote(bytes, score)
    move_from("schedule", bytes, score) { enq.enqueue_jobs }
  end

  def write(step)
    queue = step.fetch("queue")
    step.fetch("cases").map do |text|
      bytes = JSON.generate(JSON.parse(text))
      score = step.fetch("score").to_f
      {
        "bytes" => bytes,
        "fail" => fail_once(bytes, queue),
        "kill" => kill(bytes),
        "retry" => requeue(bytes, "retry", score),
        "add_to_queue" => requeue(bytes, "add_to_queue", score),
        "promote" => promote(bytes, score)
      }
    end
  end

  def push(step)
    step.fetch("cases").map do |text|
      Sidekiq::Client.push(JSON.parse(text))
    rescue => e
      {"error" => "#{e.class}: #{e.message[0, 200]}"}
    end
  end

  def view(job)
    v = {
      "value" => job.value,
      "jid" => job.jid,
      "args" => canon(job.args),
      "display_class" => job.display_class,
      "display_args" => canon(job.display_args),
      "created_at" => time_view(job.created_at),
      "enqueued_at" => time_view(job.enqueued_at),
      "item" => canon(job.item)
    }
    v["failed_at"] = time_view(job.failed_at) if job.respond_to?(:failed_at)
    v["score"] = job.score.to_s if job.respond_to?(:score)
    v
  rescue => e
    {"value" => job.value, "error" => "#{e.class}: #{e.message[0, 200]}"}
  end

  def views(step)
    out = {}
    step.fetch("queues", []).each { |q| out["queue:#{q}"] = Sidekiq::Queue.new(q).map { |j| view(j) } }
    sets = {"schedule" => Sidekiq::ScheduledSet, "retry" => Sidekiq::RetrySet, "dead" => Sidekiq::DeadSet}
    step.fetch("sets", []).each { |s| out[s] = sets.fetch(s).new.map { |j| view(j) } }
    out
  end

  def webui(step)
    require "sidekiq/web"
    require "rack/mock"
    app = Rack::MockRequest.new(Sidekiq::Web.new)
    step.fetch("queues").to_h do |q|
      res = app.get("/queues/#{CGI.escape(q)}?count=#{step.fetch("count")}", "rack.session" => {})
      [q, {"status" => res.status, "body" => res.body.to_s.force_encoding("UTF-8").scrub}]
    end
  end

  def run(step)
    use_redis(step["url"])
    case step.fetch("op")
    when "write" then write(step)
    when "push" then push(step)
    when "views" then views(step)
    when "webui" then webui(step)
    when "flush" then Bridge.redis { |c| c.flushdb } && true
    else raise ArgumentError, "unknown step #{step["op"]}"
    end
  end
end

request = JSON.parse($stdin.read)
results = request.fetch("steps").map { |s| FuzzOracle.run(s) }
$stdout.puts "__BRIDGE_RESULT__ #{JSON.generate(results, max_nesting: false, ascii_only: true)}"
