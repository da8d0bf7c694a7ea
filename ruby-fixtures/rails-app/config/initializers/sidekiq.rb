Sidekiq.configure_client { |c| c.redis = {url: ENV.fetch("REDIS_URL")} }
Sidekiq.configure_server do |c|
  c.redis = {url: ENV.fetch("REDIS_URL")}
  # As ../lib/jobs.rb: no 10 s initial wait, so scheduled work runs within seconds.
  c[:poll_interval_average] = ENV.fetch("BRIDGE_POLL_INTERVAL", "1").to_f
end
Sidekiq.logger.level = Logger::WARN unless ENV["BRIDGE_VERBOSE"]
