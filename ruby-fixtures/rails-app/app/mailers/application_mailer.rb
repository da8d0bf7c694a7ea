class ApplicationMailer < ActionMailer::Base
  default from: "shop@example.com"

  # After the real (file) delivery: the mail as delivered, for the tests to wait on.
  after_deliver do
    Sidekiq.redis { |r| r.rpush("shop:delivered", JSON.generate({to: message.to, encoded: message.encoded})) }
  end
end
