# Fails while loading: the contract lists BrokenLoadJob as unchecked.
class BrokenLoadJob
  include Sidekiq::Job
  sidekiq_options queue: NoSuchQueueConstant

  def perform(x)
  end
end
