# The queue comes from the arguments; a user that cannot be loaded is reported
# and retried by Sidekiq (the error is raised again).
class NotifyJob < ApplicationJob
  queue_as { arguments.last.is_a?(Hash) && arguments.last[:urgent] ? "urgent" : "low" }
  sidekiq_options retry: 1

  rescue_from ActiveJob::DeserializationError do |error|
    report(rescued: error.cause.class.name)
    raise error
  end

  def perform(user, message, urgent: false)
    report(user: user.email, account: user.account.name, message: message, urgent: urgent)
  end
end
