# A record through GlobalID and a keyword; a record deleted before the job ran
# is nothing to reindex, so the job is discarded.
class ReindexJob < ApplicationJob
  queue_as :default
  discard_on ActiveJob::DeserializationError do |job, error|
    job.report(discarded: error.cause.class.name)
  end

  def perform(post, force: false)
    post.increment!(:reindexed)
    report(post_id: post.id, reindexed: post.reindexed, title: post.title, account: post.account.name, force: force)
  end
end
