# The schema is loaded at boot into the (temporary) database, once.
Rails.application.config.after_initialize do
  ActiveRecord::Migration.verbose = false
  load Rails.root.join("db/schema.rb") unless ActiveRecord::Base.connection.table_exists?(:posts)
end
