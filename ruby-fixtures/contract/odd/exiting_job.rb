# Calls abort while loading (a missing setting, say): the pull goes on and
# lists ExitingJob as unchecked.
class ExitingJob
  include Sidekiq::Job
  abort "ExitingJob needs SHOP_API_KEY"

  def perform(x)
  end
end
