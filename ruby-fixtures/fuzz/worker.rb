# The real worker of the differential fuzzer: `sidekiq -r fuzz/worker.rb`
# performs the jobs Node wrote and records, for each, the arguments exactly as
# Ruby read them (FuzzOracle.canon) and whether the job ran, in `fuzz:performed`.
# lib/jobs loads ActiveJob with the release's own Sidekiq adapter.
require_relative "../lib/jobs"
require_relative "canon"

class FuzzRecordJob
  include Sidekiq::Job
  def perform(*args) = nil
end

module Fuzz
  module Nested
    class RecordJob
      include Sidekiq::Job
      def perform(*args) = nil
    end
  end
end

if defined?(ActiveJob)
  require "globalid"
  GlobalID.app = "fuzz"
  FuzzModel = Struct.new(:id)
  # The generated GlobalIDs name app "fuzz": every one locates a FuzzModel.
  GlobalID::Locator.use(:fuzz) { |gid| FuzzModel.new(gid.model_id) }

  class FuzzAjJob < ActiveJob::Base
    def perform(*args, **kw) = nil
  end
end

# Records every job: its Sidekiq arguments as read, and what performing it raised.
class FuzzRecordMiddleware
  def call(_job_instance, job, _queue)
    error = nil
    begin
      yield
    rescue => e
      error = "#{e.class}: #{e.message[0, 300]}"
    end
    entry = {"jid" => job["jid"], "args" => FuzzCanon.canon(job["args"]), "error" => error}
    Bridge.redis { |r| r.rpush("fuzz:performed", JSON.generate(entry, max_nesting: false, ascii_only: true)) }
  end
end

Sidekiq.configure_server do |config|
  config.server_middleware { |chain| chain.add FuzzRecordMiddleware }
end
