# Requires a file that is not there: Ruby's message names its absolute path,
# which the contract must not carry (the same app checked out elsewhere would
# differ from it).
require_relative "missing_helper"

class MissingHelperJob
  include Sidekiq::Job

  def perform(x)
  end
end
