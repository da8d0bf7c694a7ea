# The oracle of interop-tests/rails-values.test.ts: builds each generated value
# (chaos/fuzz/rails-values.ts) with Ruby's own constructors and prints what
# ActiveJob::Serializers.serialize writes for it, as JSON text, or the class of
# the error Ruby raises. One boot of the app for the whole batch, read from and
# written to Redis (the key in ARGV[0]), so no file crosses into the root filesystem.
require_relative "../config/environment"

def instant(ns)
  Time.at(Integer(ns).div(10**9), Integer(ns) % 10**9, :nsec, in: "UTC")
end

def build(c)
  return nil if c.nil?
  case c["t"]
  when "bd" then BigDecimal(c["s"])
  when "time" then instant(c["ns"])
  when "datetime" then instant(c["ns"]).to_datetime
  when "tz"
    zone = ActiveSupport::TimeZone[c["zone"]] or raise ArgumentError, "unknown zone"
    instant(c["ns"]).in_time_zone(zone)
  when "date" then Date.iso8601(c["ymd"])
  when "dur" then c["parts"].map { |k, v| v.public_send(k) }.reduce(:+)
  when "range" then Range.new(build(c["b"]), build(c["e"]), c["x"])
  when "int" then c["v"]
  when "float" then Float(c["s"])
  when "str" then c["v"]
  when "sym" then c["v"].to_sym
  else raise "unknown case #{c["t"]}"
  end
end

key = ARGV.fetch(0)
cases = JSON.parse(Sidekiq.redis { |r| r.get("#{key}:in") })
out = cases.map do |c|
  {"json" => JSON.generate(ActiveJob::Serializers.serialize(build(c)))}
rescue ArgumentError, TypeError, RangeError => e
  {"error" => e.class.name, "message" => e.message.b.encode("UTF-8", invalid: :replace, undef: :replace)}
end
Sidekiq.redis { |r| r.set("#{key}:out", JSON.generate({"results" => out, "mapping" => ActiveSupport::TimeZone::MAPPING})) }
