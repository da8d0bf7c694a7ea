# A plain Sidekiq job beside the ActiveJob ones.
class AuditWorker
  include Sidekiq::Job
  sidekiq_options queue: "audit", retry: 2

  def perform(account_id, action)
    account = Account.find(account_id)
    Sidekiq.redis { |r| r.rpush("shop:performed", JSON.generate({job: "AuditWorker", jid: jid, account: account.name, action: action})) }
  end
end
