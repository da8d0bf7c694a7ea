# The rolling upgrades (interop-tests/rolling-upgrade.test.ts): a job class
# both sides run, a producer on this release's client, and what this
# release's API and Web UI show of a Node process (`sidekiq -r .../lib/upgrade_jobs.rb`).
require_relative "jobs"

# Records its jid, who ran it and the created_at it was pushed with in
# `upgrade:ran`, as the Node handler of the same class does.
class UpgradeJob
  include Sidekiq::Job

  def perform(_from, _n)
    entry = {"jid" => jid, "by" => Sidekiq::VERSION, "created_at" => (Thread.current[:bridge_job] || {})["created_at"]}
    Bridge.redis { |r| r.rpush("upgrade:ran", JSON.generate(entry)) }
  end
end

module Upgrade
  # Pushes UpgradeJob with this release's client until `stop_key` is set; each
  # jid goes to `upgrade:pushed` once pushed. Returns how many.
  def self.produce(queue, stop_key)
    n = 0
    until Bridge.redis { |r| r.get(stop_key) }
      jid = UpgradeJob.set(queue: queue).perform_async("ruby", n)
      Bridge.redis { |r| r.rpush("upgrade:pushed", jid) }
      n += 1
      sleep 0.02 # a steady trickle, not a flood
    end
    n
  end

  # The Node process `identity` as this release's ProcessSet and Web UI
  # (/busy) show it, and a job Node pushed to `probe_queue`, read through
  # this release's API.
  def self.view(identity, probe_queue, probe_jid)
    require "sidekiq/web"
    require "rack/mock"
    node = Sidekiq::ProcessSet.new.find { |p| p.identity == identity }
    # A page that raises (8.0's /busy beside an 8.1 process) is reported, not raised.
    res = begin
      Rack::MockRequest.new(Sidekiq::Web.new).get("/busy", "rack.session" => {})
    rescue => e
      nil
    end
    info = Bridge.redis { |r| r.hget(identity, "info") }
    job = probe_jid && Sidekiq::Queue.new(probe_queue).find_job(probe_jid)
    {
      "release" => Sidekiq::VERSION,
      "node" => node && {"version" => node["version"], "concurrency" => node["concurrency"], "capsules" => node["capsules"]},
      "infoKeys" => info ? JSON.parse(info).keys.sort : [],
      "busy" => res ? res.status : "#{e.class}: #{e.message}",
      "busyShowsNode" => res ? res.body.include?(%(value="#{identity}")) : false,
      "probe" => job && {"createdAtClass" => job["created_at"].class.name, "createdAt" => job.created_at.to_f}
    }
  end
end
