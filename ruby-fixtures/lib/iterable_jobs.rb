# An IterableJob implemented in Ruby and in Node (its twin is registered in
# interop-tests/iterable.test.ts): it iterates 0...count with Sidekiq's
# array_enumerator, sleeping delay_ms per item, and appends each item, with
# the side that processed it, to the Redis list `bridge:iterated:<jid>`; its
# hooks go to `bridge:hooks:<jid>`. With the key `bridge:fail-once:<jid>` set
# to an item, that item raises once (the key is consumed). Loaded by
# `sidekiq -r` and by eval.rb.
require_relative "jobs"

class BridgeIterableJob
  include Sidekiq::IterableJob

  def build_enumerator(count, delay_ms, cursor:)
    array_enumerator((0...count).to_a, cursor: cursor)
  end

  def each_iteration(item, _count, delay_ms)
    fail_at = Sidekiq.redis { |c| c.get("bridge:fail-once:#{jid}") }
    if fail_at == item.to_s && Sidekiq.redis { |c| c.del("bridge:fail-once:#{jid}") } == 1
      raise "bridge fixture: item #{item} fails once"
    end
    Sidekiq.redis { |c| c.rpush("bridge:iterated:#{jid}", "ruby:#{item}") }
    sleep delay_ms / 1000.0
  end

  def on_start = hook("start")
  def on_resume = hook("resume")
  def on_stop = hook("stop")
  def on_cancel = hook("cancel")
  def on_complete = hook("complete")

  private

  def hook(name)
    Sidekiq.redis { |c| c.rpush("bridge:hooks:#{jid}", "ruby:#{name}:#{@_executions}") }
  end
end
