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

  # Sidekiq::JobRetry as each release's processor builds it (6.4: no
  # argument; 6.5: the Sidekiq module is the configuration; 7+: a capsule).
  def self.job_retry
    require "sidekiq/capsule" if SIDEKIQ_7
    require "sidekiq/job_retry"
    if SIDEKIQ_7 then Sidekiq::JobRetry.new(Sidekiq.default_configuration.default_capsule)
    elsif Gem::Version.new(Sidekiq::VERSION) >= Gem::Version.new("6.5") then Sidekiq::JobRetry.new(Sidekiq)
    else Sidekiq::JobRetry.new
    end
  end

  # A setting where each release keeps it (6.4: Sidekiq.options; 6.5: Sidekiq[]; 7+: the configuration).
  def self.set_option(key, value)
    if SIDEKIQ_7 then Sidekiq.default_configuration[key] = value
    elsif Sidekiq.respond_to?(:[]=) then Sidekiq[key] = value
    else Sidekiq.options[key] = value
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
