# Performed by Node (the tests register it there): Rails only enqueues it.
class NodeSideJob < ApplicationJob
  queue_as :node
end
