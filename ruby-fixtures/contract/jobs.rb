# Job classes for the contract tests: every kind of perform parameter, the
# sidekiq_options Node must copy, RBS signatures for some (sig/jobs.rbs) and
# none for others. Every perform does nothing, so a call that raises
# ArgumentError raised it at the call (arity, keywords), as the oracle needs.
require "sidekiq"

class WelcomeEmailJob
  include Sidekiq::Job
  sidekiq_options queue: "mailers", retry: 5

  def perform(user_id, template)
  end
end

class OptionalArgsJob
  include Sidekiq::Job
  sidekiq_options queue: :reports, backtrace: 10, tags: ["reports"]

  def perform(report_id, page = 1, format = "pdf")
  end
end

class SplatJob
  include Sidekiq::Job
  sidekiq_options retry: false, dead: false

  def perform(label, *counts)
  end
end

class PostArgJob
  include Sidekiq::Job

  def perform(first, middle = nil, last)
  end
end

# Keywords: Sidekiq passes args positionally, so a Hash is never keywords.
class OptionalKeywordJob
  include Sidekiq::Job

  def perform(id, mode: "fast")
  end
end

class RequiredKeywordJob
  include Sidekiq::Job

  def perform(id, mode:)
  end
end

class KeyrestJob
  include Sidekiq::Job

  def perform(*args, **opts)
  end
end

class BlockJob
  include Sidekiq::Job
  sidekiq_options retry_for: 3600

  def perform(item, &done)
  end
end

class NoArgsJob
  include Sidekiq::Job
  sidekiq_options queue: "low", retry: 3, tags: %w[nightly cleanup]

  def perform
  end
end

# The older name of the module.
class LegacyWorker
  include Sidekiq::Worker
  sidekiq_options queue: "legacy"

  def perform(payload)
  end
end

# sidekiq-unique-jobs' lock options ride in sidekiq_options.
class LockedJob
  include Sidekiq::Job
  sidekiq_options lock: :until_executed, lock_ttl: 600, on_conflict: :log

  def perform(account_id)
  end
end

# Pushed to its own Redis (a shard): the pool never enters a payload.
class ShardedJob
  include Sidekiq::Job
  sidekiq_options pool: Sidekiq::RedisConnection.create(url: "redis://127.0.0.1:1/0", size: 1)

  def perform(id)
  end
end

module Billing
  class InvoiceJob
    include Sidekiq::Job
    sidekiq_options queue: "billing"

    def perform(invoice_id, amount, meta = {})
    end
  end
end
