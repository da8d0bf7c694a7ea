# Shared set-up for every Ruby fixture: real Sidekiq on the Redis in REDIS_URL.
require "json"
require "time"
require "sidekiq"
require "sidekiq/api"

module Bridge
  SIDEKIQ_7 = Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("7.0")

  # A value with its Ruby class at every level, so tests compare both.
  def self.typed(v)
    case v
    when Hash then {"Hash" => v.map { |k, x| [typed(k), typed(x)] }}
    when Array then {"Array" => v.map { |x| typed(x) }}
    else {v.class.name => v.inspect}
    end
  end

  def self.redis(&block)
    Sidekiq.redis(&block)
  end

  # Polls until the block returns a truthy value, or raises after `timeout` seconds.
  def self.wait_for(what, timeout: 30)
    deadline = Time.now + timeout
    loop do
      v = yield
      return v if v
      raise "timed out after #{timeout}s waiting for #{what}" if Time.now > deadline
      sleep 0.1
    end
  end
end

Sidekiq.configure_client { |c| c.redis = {url: ENV.fetch("REDIS_URL")} }
Sidekiq.configure_server { |c| c.redis = {url: ENV.fetch("REDIS_URL")} }
Sidekiq.logger.level = Logger::WARN unless ENV["BRIDGE_VERBOSE"]
