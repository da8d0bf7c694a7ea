class User < ApplicationRecord
  belongs_to :account
end
