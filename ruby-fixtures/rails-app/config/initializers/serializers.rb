Rails.application.config.after_initialize { ActiveJob::Serializers.add_serializers(MoneySerializer) }
