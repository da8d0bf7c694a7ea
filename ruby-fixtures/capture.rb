# Makes real Sidekiq write every record kind the bridge must read and write,
# and prints them as one JSON document (see ruby-fixtures/README.md).
#   REDIS_URL=redis://127.0.0.1:PORT/DB ruby capture.rb > captures/VERSION.json
require_relative "lib/jobs"

records = []
redis = ->(&b) { Sidekiq.redis(&b) }
add = ->(kind, name, **fields) { records << {"kind" => kind, "name" => name}.merge(fields.transform_keys(&:to_s)) }
queue_raw = ->(q) { redis.call { |r| r.lrange("queue:#{q}", 0, -1) } }
zset = ->(key) { redis.call { |r| r.zrange(key, 0, -1, withscores: true) } }
score_s = ->(s) { s.is_a?(Float) ? s.to_s : s.to_f.to_s }

redis.call { |r| r.flushdb }

# Immediate pushes.
Sidekiq::Client.push("class" => "RecordJob", "args" => [1, "two", 3.0, {"k" => [nil, true]}])
add.call("job", "Client.push by class name", raw: queue_raw.call("default").first)
redis.call { |r| r.del("queue:default") }

RecordJob.set(queue: "critical").perform_async(2**64 + 1, 1.0, -0.5, "é\u2028", {"a" => [], "b" => {}}, nil, true)
add.call("job", "perform_async with set(queue:)", raw: queue_raw.call("critical").first)

Sidekiq::Client.push_bulk("class" => "RecordJob", "args" => [[1], [2], [3]])
queue_raw.call("default").reverse.each_with_index { |raw, i| add.call("job", "push_bulk[#{i}]", raw: raw) }
redis.call { |r| r.del("queue:default") }

# Scheduled.
RecordJob.perform_in(3600, "later")
raw, score = zset.call("schedule").first
add.call("scheduled", "perform_in(3600)", raw: raw, score: score_s.call(score))
Sidekiq::Client.push("class" => "RecordJob", "args" => ["at"], "at" => Time.now.to_f + 7200)
raw, score = zset.call("schedule").last
add.call("scheduled", "Client.push with at", raw: raw, score: score_s.call(score))
redis.call { |r| r.del("schedule") }

# A real server for retry, dead, heartbeat and work records.
log = File.open("/tmp/bridge-capture-sidekiq.log", "w")
server = spawn("sidekiq", "-r", File.expand_path("lib/jobs.rb", __dir__), "-q", "capture", "-c", "2", "-t", "2",
  "-g", "capture", out: log, err: log)
begin
  FailJob.set(queue: "capture").perform_async("boom", 2**70)
  retry_entry = Bridge.wait_for("the first failure in the retry set") { Sidekiq::RetrySet.new.first }
  raw, score = zset.call("retry").first
  add.call("retry", "first failure (backtrace: true)", raw: raw, score: score_s.call(score))

  # add_to_queue re-runs it without the API retry's retry_count decrement, so the second failure exhausts retry: 1.
  retry_entry.add_to_queue
  Bridge.wait_for("the exhausted job in the dead set") { Sidekiq::DeadSet.new.size > 0 }
  raw, score = zset.call("dead").first
  add.call("dead", "exhausted after second failure", raw: raw, score: score_s.call(score))

  redis.call { |r| r.lpush("queue:capture", "{not json") }
  Bridge.wait_for("malformed JSON in the dead set") { zset.call("dead").any? { |(m, _)| m == "{not json" } }
  raw, score = zset.call("dead").find { |(m, _)| m == "{not json" }
  add.call("dead-malformed", "malformed JSON", raw: raw, score: score_s.call(score))

  SlowJob.set(queue: "capture").perform_async(30)
  identity, work = Bridge.wait_for("a heartbeat with a running job", timeout: 40) do
    ids = redis.call { |r| r.smembers("processes") }
    ids.filter_map do |id|
      next unless redis.call { |r| r.hget(id, "busy") }.to_i > 0
      w = %w[work workers].map { |s| ["#{id}:#{s}", redis.call { |r| r.hgetall("#{id}:#{s}") }] }.find { |(_, h)| !h.empty? }
      [id, w] if w
    end.first
  end
  hash = redis.call { |r| r.hgetall(identity) }
  add.call("process", "heartbeat with one busy job", key: identity, hash: hash)
  add.call("process-info", "heartbeat info", raw: hash.fetch("info"))
  work[1].each { |tid, value| add.call("work", "running SlowJob", key: work[0], field: tid, raw: value) }
ensure
  Process.kill("TERM", server)
  Process.wait(server)
  log.close
end

# ActiveJob, where the root filesystem has it (forky: Rails 7.2); see lib/jobs.rb.
if defined?(AjRecordJob)
  AjRecordJob.perform_later(1, "s", {"str_key" => 1, :sym_key => :sym_val}, ts: Time.at(1_700_000_000, 123456789, :nsec), big: 1.5)
  add.call("activejob", "perform_later", raw: queue_raw.call("default").first)
  AjRecordJob.set(wait: 3600).perform_later(:symbol_arg)
  raw, score = zset.call("schedule").first
  add.call("activejob", "set(wait: 3600).perform_later", raw: raw, score: score_s.call(score))
end

puts JSON.pretty_generate(
  "sidekiq_version" => Sidekiq::VERSION,
  "ruby_version" => RUBY_VERSION,
  "captured_at" => Time.now.utc.iso8601,
  "records" => records
)
