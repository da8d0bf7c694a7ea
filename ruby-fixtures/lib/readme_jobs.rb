# The Ruby side of README's examples (interop-tests/readme.test.ts): the job
# class the README enqueues from Node, recording what it received like the
# fixtures in jobs.rb do.
require_relative "jobs"

class WelcomeEmailJob
  include Sidekiq::Job
  include BridgeRecording
  def perform(*args) = record(args)
end
