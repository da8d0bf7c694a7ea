# A default JSON cannot carry (a Symbol): the parameter is optional all the
# same, and the class is checked like any other.
class SymbolDefaultJob
  include Sidekiq::Job

  def perform(id, speed = :fast)
  end
end
