# A default value JSON cannot carry (a Symbol).
class SymbolDefaultJob
  include Sidekiq::Job

  def perform(id, speed = :fast)
  end
end
