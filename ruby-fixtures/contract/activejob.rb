# ActiveJob classes for the contract tests (Rails 6.1 on bookworm, 7.2 on
# trixie and forky), performed through Sidekiq's adapter. Keyword arguments
# reach perform as keywords here: ActiveJob marks them in the payload.
require "sidekiq"
require "active_job"
own = File.join(File.dirname($LOADED_FEATURES.grep(%r{/sidekiq\.rb\z}).first.to_s), "active_job/queue_adapters/sidekiq_adapter.rb")
File.exist?(own) ? require(own) : require("active_job/queue_adapters/sidekiq_adapter")
ActiveJob::Base.queue_adapter = :sidekiq
ActiveJob::Base.logger = Logger.new(nil)

# Abstract: not in the contract.
class ContractApplicationJob < ActiveJob::Base
end

class SignupJob < ContractApplicationJob
  queue_as :signups

  def perform(user_id, plan = "free", notify:, source: "web", **extra)
  end
end

class KeywordsOnlyJob < ActiveJob::Base
  queue_as :default

  def perform(name:, count: 1)
  end
end

class AjSplatJob < ActiveJob::Base
  queue_as :low

  def perform(first, *rest)
  end
end
