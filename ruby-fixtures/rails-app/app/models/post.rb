class Post < ApplicationRecord
  belongs_to :account
end
