# The real OpenTelemetry Ruby SDK with its Sidekiq instrumentation, for the
# cross-language trace tests (load path from shared/peers/ruby). Finished
# spans stay in the SDK's InMemorySpanExporter and are copied as JSON to the
# Redis list `otel:spans`, so a test can read a running server's spans.
# OTEL_SIDEKIQ_PROPAGATION picks the instrumentation's propagation_style.
require_relative "jobs"
require "opentelemetry/sdk"
require "opentelemetry-instrumentation-sidekiq"

module BridgeOtel
  def self.describe(s)
    {
      "name" => s.name,
      "kind" => s.kind.to_s,
      "trace_id" => s.hex_trace_id,
      "span_id" => s.hex_span_id,
      "parent_span_id" => (s.parent_span_id == OpenTelemetry::Trace::INVALID_SPAN_ID) ? nil : s.hex_parent_span_id,
      "links" => (s.links || []).map { |l| {"trace_id" => l.span_context.hex_trace_id, "span_id" => l.span_context.hex_span_id} },
      "attributes" => s.attributes.to_h,
      "events" => (s.events || []).map(&:name)
    }
  end

  # The in-memory exporter, plus a copy of each span in Redis.
  class Exporter < OpenTelemetry::SDK::Trace::Export::InMemorySpanExporter
    def export(span_datas, timeout: nil)
      result = super
      span_datas.each do |s|
        Bridge.redis { |r| r.rpush("otel:spans", JSON.generate(BridgeOtel.describe(s))) }
      end
      result
    end
  end

  EXPORTER = Exporter.new
end

ENV["OTEL_TRACES_EXPORTER"] ||= "none"
OpenTelemetry.logger = Logger.new($stderr, level: Logger::WARN)
OpenTelemetry::SDK.configure do |c|
  c.service_name = "bridge-ruby"
  c.use "OpenTelemetry::Instrumentation::Sidekiq", {
    propagation_style: ENV.fetch("OTEL_SIDEKIQ_PROPAGATION", "link").to_sym
  }
  c.add_span_processor(OpenTelemetry::SDK::Trace::Export::SimpleSpanProcessor.new(BridgeOtel::EXPORTER))
end
