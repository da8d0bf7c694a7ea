# Loaded first (ruby -r) when the harness runs an upstream Sidekiq release from
# its sources: RUBYLIB naming a missing or wrong folder would silently load the
# root filesystem's own Sidekiq, so anything but the expected release aborts.
require "sidekiq"
want = ENV.fetch("BRIDGE_SIDEKIQ_RELEASE")
unless Sidekiq::VERSION == want
  loaded = $LOADED_FEATURES.grep(%r{/sidekiq\.rb\z}).first
  abort "sidekiq-bridge harness: expected Sidekiq #{want}, loaded #{Sidekiq::VERSION} from #{loaded} (RUBYLIB=#{ENV["RUBYLIB"]})"
end
# Said once in each process's output, so a server's log shows what it ran.
warn "sidekiq-bridge harness: Sidekiq #{Sidekiq::VERSION} from #{$LOADED_FEATURES.grep(%r{/sidekiq\.rb\z}).first}"
