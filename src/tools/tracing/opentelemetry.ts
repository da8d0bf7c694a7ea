// OpenTelemetry for Sidekiq jobs, as OpenTelemetry's Ruby Sidekiq
// instrumentation does it, so one trace crosses Ruby and Node: the client
// middleware opens a `<queue> publish` producer span and writes W3C
// `traceparent` (and `tracestate`, `baggage`) at the top level of the job;
// the server middleware reads them back and runs the job in a
// `<queue> process` consumer span, a new trace linked to the producer
// (propagation "link", Ruby's default), its child ("child"), or unrelated
// ("none"). @opentelemetry/api is an optional peer dependency: pass it in,
// or let `loadOpenTelemetry` import it; without it nothing is added.
import type * as Otel from "@opentelemetry/api";
import type { ClientMiddleware } from "../../core/client/middleware.js";
import type { JobHash } from "../../core/client/normalize.js";
import type { ServerMiddleware } from "../../core/server/processor.js";
import type { JobRecord } from "../../core/wire/job-record.js";
import { CARRIER_KEYS } from "./trace-context.js";

/** The @opentelemetry/api module, as tracing uses it. */
export type OpenTelemetryApi = typeof Otel;

/** Options of job tracing: propagation style (link, child or none), span naming, peer service. */
export interface TracingOptions {
  /** The @opentelemetry/api module (`import * as api from "@opentelemetry/api"`). */
  api: OpenTelemetryApi;
  /** Default: the global tracer provider. */
  tracerProvider?: Otel.TracerProvider;
  /** Ruby's `propagation_style`: "link" (default), "child" or "none". */
  propagationStyle?: "link" | "child" | "none";
  /** Ruby's `span_naming`: "<queue> publish" (default "queue") or "<class> publish" ("job_class"). */
  spanNaming?: "queue" | "job_class";
  /** Ruby's `peer_service`: the `peer.service` attribute. */
  peerService?: string;
}

const TRACER_NAME = "sidekiq-bridge";

function tracerOf(o: TracingOptions): Otel.Tracer {
  return (o.tracerProvider ?? o.api.trace.getTracerProvider()).getTracer(TRACER_NAME);
}

/** Attribute names of OpenTelemetry's semantic conventions the Ruby instrumentation uses. */
function attributes(
  o: TracingOptions,
  className: string,
  jid: unknown,
  queue: unknown,
  operation?: string,
): Otel.Attributes {
  const a: Otel.Attributes = {
    "messaging.system": "sidekiq",
    "messaging.sidekiq.job_class": className,
  };
  if (typeof jid === "string") a["messaging.message_id"] = jid;
  if (typeof queue === "string") a["messaging.destination"] = queue;
  a["messaging.destination_kind"] = "queue";
  if (operation) a["messaging.operation"] = operation;
  if (o.peerService) a["peer.service"] = o.peerService;
  return a;
}

/** A payload time (float seconds before Sidekiq 8, integer ms since) as epoch milliseconds. */
function payloadMillis(v: unknown): number | undefined {
  const n = typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : (v as { value?: unknown } | null)?.value;
  if (typeof n !== "number" || !Number.isFinite(n)) return undefined;
  return n < 1e11 ? n * 1000 : n;
}

/** A payload time as a Date (for the publish span's event). */
function payloadTime(v: unknown): Date | undefined {
  const ms = payloadMillis(v);
  return ms === undefined ? undefined : new Date(ms);
}

/**
 * A payload time as OpenTelemetry's HrTime, exactly as the SDK converts a
 * Date (whole milliseconds, then its millisToHrTime), without the Date: two
 * events a job.
 */
function payloadHrTime(v: unknown): Otel.HrTime | undefined {
  const f = payloadMillis(v);
  if (f === undefined) return undefined;
  const ms = Math.trunc(f);
  return [Math.trunc(ms / 1000), Math.round((ms % 1000) * 1e6)];
}

/** The job's `created_at` and `enqueued_at` as the consumer span's events, as Ruby's middleware adds them. */
function addTimes(span: Otel.Span, rec: JobRecord): void {
  const created = payloadHrTime(rec.get("created_at"));
  if (created) span.addEvent("created_at", created);
  const enqueued = payloadHrTime(rec.get("enqueued_at"));
  if (enqueued) span.addEvent("enqueued_at", enqueued);
}

function recordError(o: TracingOptions, span: Otel.Span, e: unknown): void {
  quietly(() => {
    span.recordException(e instanceof Error ? e : String(e));
    const name = e instanceof Error ? e.name : "RuntimeError";
    span.setStatus({ code: o.api.SpanStatusCode.ERROR, message: `Unhandled exception of type: ${name}` });
  });
}

/** Tracing must never fail a push or a job: a broken exporter or tracer only loses spans. */
function quietly<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/**
 * Client middleware: a `<queue> publish` producer span around the push, and
 * the trace context written into the job (`traceparent` and friends, by the
 * global propagator, as Ruby's `OpenTelemetry.propagation.inject(job)`).
 */
export function tracingClientMiddleware(o: TracingOptions): ClientMiddleware {
  const { api } = o;
  const tracer = tracerOf(o);
  const setter: Otel.TextMapSetter<JobHash> = {
    set: (carrier, key, value) => void (carrier[key] = value),
  };
  return async (ctx, next) => {
    const job = ctx.job;
    const className = String(job.wrapped ?? job.class);
    const name = `${o.spanNaming === "job_class" ? className : String(job.queue)} publish`;
    const span = quietly(() =>
      tracer.startSpan(name, { kind: api.SpanKind.PRODUCER, attributes: attributes(o, className, job.jid, job.queue) }),
    );
    if (!span) return next();
    const active = api.trace.setSpan(api.context.active(), span);
    quietly(() => {
      api.propagation.inject(active, job, setter);
      const created = payloadTime(job.created_at);
      if (created) span.addEvent("created_at", created);
    });
    try {
      await api.context.with(active, next);
    } catch (e) {
      recordError(o, span, e);
      throw e;
    } finally {
      quietly(() => span.end());
    }
  };
}

const getter: Otel.TextMapGetter<JobRecord> = {
  keys: (rec) => CARRIER_KEYS.filter((k) => rec.has(k)),
  get: (rec, key) => {
    const v = rec.get(key);
    return typeof v === "string" ? v : undefined;
  },
};

/**
 * Whether the job carries a key the global propagator reads (its `fields()`):
 * without one, extract would find nothing, so it is skipped. A propagator
 * whose fields cannot be read is always asked.
 */
function carriesContext(api: OpenTelemetryApi, rec: JobRecord): boolean {
  let fields: unknown;
  try {
    fields = api.propagation.fields();
  } catch {
    return true;
  }
  if (!Array.isArray(fields)) return true;
  for (const k of fields) if (typeof k !== "string" || rec.has(k)) return true;
  return false;
}

/**
 * Server middleware: the job runs in a `<queue> process` consumer span. With
 * "link" (the default, as Ruby's) it starts a new trace linked to the span
 * context in the job; with "child" it continues that trace; with "none" it
 * ignores it. Baggage in the job is in the active context either way.
 */
export function tracingServerMiddleware(o: TracingOptions): ServerMiddleware {
  const { api } = o;
  const tracer = tracerOf(o);
  const style = o.propagationStyle ?? "link";
  const byClass = o.spanNaming === "job_class";
  const kind = api.SpanKind.CONSUMER;
  // Once per job: no closures, Dates or extraction work it can avoid.
  return async (ctx, next) => {
    const rec = ctx.job;
    const className = String(rec.get("wrapped") ?? rec.get("class"));
    const queue = rec.get("queue") ?? ctx.queue;
    const name = `${byClass ? className : String(queue)} process`;
    const attrs = attributes(o, className, rec.get("jid"), queue, "process");
    let extracted = api.ROOT_CONTEXT;
    try {
      if (carriesContext(api, rec)) extracted = api.propagation.extract(api.ROOT_CONTEXT, rec, getter);
    } catch {
      // A broken propagator: the job runs with no remote context.
    }
    let span: Otel.Span;
    try {
      if (style === "child") span = tracer.startSpan(name, { kind, attributes: attrs }, extracted);
      else {
        const remote = style === "link" ? api.trace.getSpanContext(extracted) : undefined;
        const links = remote && api.isSpanContextValid(remote) ? [{ context: remote }] : [];
        span = tracer.startSpan(name, { kind, attributes: attrs, links, root: true }, extracted);
      }
    } catch {
      // Tracing must never fail a job: a broken tracer only loses the span.
      return next();
    }
    if (!span) return next();
    try {
      // A span the sampler dropped keeps no events: do not read the times.
      if (span.isRecording()) addTimes(span, rec);
    } catch {
      // as above: only the events are lost
    }
    try {
      await api.context.with(api.trace.setSpan(extracted, span), next);
    } catch (e) {
      recordError(o, span, e);
      throw e;
    } finally {
      try {
        span.end();
      } catch {
        // as above
      }
    }
  };
}

/** The `@opentelemetry/api` module when installed, else undefined (tracing then costs nothing). */
export async function loadOpenTelemetry(): Promise<OpenTelemetryApi | undefined> {
  try {
    const m = (await import("@opentelemetry/api")) as OpenTelemetryApi & { default?: OpenTelemetryApi };
    return m.trace ? m : m.default;
  } catch {
    return undefined;
  }
}

/**
 * Traces a worker's jobs and a client's pushes when `@opentelemetry/api` is
 * installed: `await traceJobs({ worker, client })`. Returns whether it did.
 */
export async function traceJobs(
  targets: { worker?: { use(mw: ServerMiddleware): unknown }; client?: { use(mw: ClientMiddleware): unknown } },
  options: Omit<TracingOptions, "api"> & { api?: OpenTelemetryApi } = {},
): Promise<boolean> {
  const api = options.api ?? (await loadOpenTelemetry());
  if (!api) return false;
  const o = { ...options, api };
  targets.worker?.use(tracingServerMiddleware(o));
  targets.client?.use(tracingClientMiddleware(o));
  return true;
}
