// The W3C trace context at the top level of a job: the keys the propagators
// read and write (traceparent, tracestate, baggage), as Ruby's OpenTelemetry
// Sidekiq instrumentation does. Data alone, so what names the keys (the
// add-on registry, `migrate audit`) loads no tracing code.
export const CARRIER_KEYS: readonly string[] = ["traceparent", "tracestate", "baggage"];
