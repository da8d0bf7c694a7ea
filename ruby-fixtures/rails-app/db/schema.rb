ActiveRecord::Schema.define do
  create_table :accounts, if_not_exists: true do |t|
    t.string :name, null: false
    t.timestamps
  end
  create_table :users, if_not_exists: true do |t|
    t.references :account, null: false
    t.string :email, null: false
    t.string :name, null: false
    t.timestamps
  end
  create_table :posts, if_not_exists: true do |t|
    t.references :account, null: false
    t.string :title, null: false
    t.integer :reindexed, null: false, default: 0
    t.timestamps
  end
end
