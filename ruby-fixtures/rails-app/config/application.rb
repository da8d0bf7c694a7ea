# A small Rails 7.2 app, run from Debian's packages with no Bundler: the Rails
# side of the interop tests. Nothing is written under Rails.root (Docker mounts
# it read-only): SQLite and delivered mail live where the environment says.
require "rails"
require "active_record/railtie"
require "active_job/railtie"
require "action_mailer/railtie"
require "sidekiq"

module Shop
  class Application < Rails::Application
    config.root = File.expand_path("..", __dir__) # no config.ru to find it by
    config.load_defaults 7.2
    config.eager_load = true
    config.enable_reloading = false
    # Not a secret: set so that Rails does not write tmp/local_secret.txt (the app signs nothing).
    config.secret_key_base = "shop-fixture-" * 4
    config.logger = ActiveSupport::Logger.new($stderr)
    config.log_level = ENV["BRIDGE_VERBOSE"] ? :debug : :warn
    # Rails' defaults unless a test sets them: what every job and mail payload carries.
    config.time_zone = ENV.fetch("BRIDGE_RAILS_TIME_ZONE", "UTC")
    config.i18n.available_locales = %i[en de]
    config.i18n.default_locale = ENV.fetch("BRIDGE_RAILS_LOCALE", "en").to_sym
    # GlobalID.app is the module's name (shop) unless an app sets its own, as this one does when a test asks.
    config.global_id.app = ENV["BRIDGE_RAILS_GLOBALID_APP"] if ENV["BRIDGE_RAILS_GLOBALID_APP"]
    config.active_job.queue_adapter = :sidekiq
    config.action_mailer.delivery_method = :file
    config.action_mailer.file_settings = {location: ENV.fetch("BRIDGE_RAILS_MAIL", "/tmp/shop-mail")}
    config.action_mailer.default_url_options = {host: "shop.example"}
  end
end
