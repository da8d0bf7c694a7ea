// One trace across Ruby and Node with the real OpenTelemetry Ruby SDK and its
// Sidekiq instrumentation (shared/peers/ruby): a job Ruby enqueues inside a
// span and Node runs carries the trace (as a link, or as the parent), and a
// job Node enqueues inside a span and a real Ruby Sidekiq runs shows Node's
// publish span the same way. Both sides export to memory; ids are compared.
import * as api from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { beforeAll, expect, it } from "vitest";
import { Client } from "../src/core/client/client.js";
import { Worker } from "../src/assembly/worker.js";
import { tracingClientMiddleware, tracingServerMiddleware } from "../src/tools/tracing/opentelemetry.js";
import { describeEachSidekiq, waitFor } from "./support/harness.js";

const OTEL_PEERS = [
  "opentelemetry-api-1.11.0",
  "opentelemetry-sdk-1.13.0",
  "opentelemetry-common-0.25.1",
  "opentelemetry-registry-0.6.3",
  "opentelemetry-semantic_conventions-1.44.0",
  "opentelemetry-instrumentation-base-0.26.1",
  "opentelemetry-instrumentation-sidekiq-0.29.0",
];

interface RubySpan {
  name: string;
  kind: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  links: Array<{ trace_id: string; span_id: string }>;
  attributes: Record<string, string>;
  events: string[];
}

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
});

const spansNamed = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

describeEachSidekiq(
  "observability: OpenTelemetry traces across Ruby and Node",
  (sk) => {
    const env = () => ({ ...sk.peers(...OTEL_PEERS), OTEL_TRACES_EXPORTER: "none" });
    const loadOtel = `require File.join(File.dirname($0), "lib/otel_jobs")`;

    for (const style of ["link", "child"] as const) {
      it(`a job Ruby enqueues inside a span runs in Node with Ruby's publish span as its ${style}`, async () => {
        exporter.reset();
        const queue = `otel-node-${style}`;
        const r = await sk.ruby<{ jid: string; spans: RubySpan[]; raw: string[] }>(
          `${loadOtel}
          tracer = OpenTelemetry.tracer_provider.tracer("checkout")
          jid = nil
          OpenTelemetry::Context.with_current(OpenTelemetry::Baggage.set_value("tenant", "acme")) do
            tracer.in_span("POST /orders") { jid = RecordJob.set(queue: ${JSON.stringify(queue)}).perform_async(1, "a") }
          end
          {"jid" => jid, "spans" => BridgeOtel::EXPORTER.finished_spans.map { |s| BridgeOtel.describe(s) },
           "raw" => Sidekiq.redis { |c| c.lrange("queue:${queue}", 0, -1) }}`,
          env(),
        );
        const publish = r.spans.find((s) => s.name === `${queue} publish`)!;
        const root = r.spans.find((s) => s.name === "POST /orders")!;
        expect(publish).toMatchObject({ kind: "producer", trace_id: root.trace_id, parent_span_id: root.span_id });
        expect(r.raw).toHaveLength(1);
        const raw = r.raw[0]!;
        // Ruby writes the context at the top level of the job, after its own keys.
        expect(raw).toContain(`"traceparent":"00-${publish.trace_id}-${publish.span_id}-01"`);
        expect(raw).toContain(`"baggage":"tenant=acme"`);
        expect(Object.keys(JSON.parse(raw) as object).slice(-3)).toEqual(["traceparent", "baggage", "enqueued_at"]);

        const seen: Array<{ raw: string; tenant?: string; active?: api.SpanContext }> = [];
        const w = new Worker({
          redis: sk.url,
          dialect: sk.target.version,
          queues: [queue],
          concurrency: 2,
          timeout: 5,
        });
        w.use(tracingServerMiddleware({ api, tracerProvider: provider, propagationStyle: style }));
        w.register("RecordJob", (_args, ctx) => {
          const tenant = api.propagation.getBaggage(api.context.active())?.getEntry("tenant")?.value;
          seen.push({ raw: ctx.raw, ...(tenant ? { tenant } : {}), active: api.trace.getActiveSpan()?.spanContext() });
        });
        await w.start();
        try {
          await waitFor("the Node consumer span", async () => spansNamed(`${queue} process`).length === 1 || undefined);
        } finally {
          await w.stop();
        }
        const consumer = spansNamed(`${queue} process`)[0]!;
        // The job's bytes reached the handler exactly as Ruby wrote them.
        expect(seen).toHaveLength(1);
        expect(seen[0]!.raw).toBe(raw);
        expect(seen[0]!.tenant).toBe("acme");
        expect(seen[0]!.active?.spanId).toBe(consumer.spanContext().spanId);
        expect(consumer.kind).toBe(api.SpanKind.CONSUMER);
        expect(consumer.attributes).toEqual({
          "messaging.system": "sidekiq",
          "messaging.sidekiq.job_class": "RecordJob",
          "messaging.message_id": r.jid,
          "messaging.destination": queue,
          "messaging.destination_kind": "queue",
          "messaging.operation": "process",
        });
        expect(consumer.events.map((e) => e.name)).toEqual(["created_at", "enqueued_at"]);
        if (style === "link") {
          expect(consumer.spanContext().traceId).not.toBe(publish.trace_id);
          expect(consumer.parentSpanContext).toBeUndefined();
          expect(consumer.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
            [publish.trace_id, publish.span_id],
          ]);
        } else {
          expect(consumer.spanContext().traceId).toBe(publish.trace_id);
          expect(consumer.parentSpanContext?.spanId).toBe(publish.span_id);
          expect(consumer.links).toEqual([]);
        }
      });

      it(`a job Node enqueues inside a span runs in real Ruby Sidekiq with Node's publish span as its ${style}`, async () => {
        exporter.reset();
        const queue = `otel-ruby-${style}`;
        await sk.redis.del("otel:spans", "bridge:received");
        const client = new Client({ redis: sk.url, dialect: sk.target.version });
        client.use(tracingClientMiddleware({ api, tracerProvider: provider }));
        const tracer = provider.getTracer("node-app");
        let jid: string | null = null;
        let rootCtx: api.SpanContext | undefined;
        await tracer.startActiveSpan("POST /invoices", async (root) => {
          rootCtx = root.spanContext();
          const bag = api.propagation.createBaggage({ tenant: { value: "globex" } });
          await api.context.with(api.propagation.setBaggage(api.context.active(), bag), async () => {
            jid = await client.push({ class: "RecordJob", queue, args: [2, "b"] });
          });
          root.end();
        });
        await client.close();
        const publish = spansNamed(`${queue} publish`)[0]!;
        expect(publish.kind).toBe(api.SpanKind.PRODUCER);
        expect(publish.spanContext().traceId).toBe(rootCtx!.traceId);
        expect(publish.parentSpanContext?.spanId).toBe(rootCtx!.spanId);
        expect(publish.attributes).toEqual({
          "messaging.system": "sidekiq",
          "messaging.sidekiq.job_class": "RecordJob",
          "messaging.message_id": jid,
          "messaging.destination": queue,
          "messaging.destination_kind": "queue",
        });
        const raw = (await sk.redis.lrange(`queue:${queue}`, 0, -1))[0]!;
        const traceparent = `00-${publish.spanContext().traceId}-${publish.spanContext().spanId}-01`;
        // The context keys follow the job's own, then enqueued_at, exactly as in Ruby's payload.
        const keys = Object.keys(JSON.parse(raw) as object);
        expect(keys.slice(-3)).toEqual(["traceparent", "baggage", "enqueued_at"]);
        expect(raw).toContain(`"traceparent":"${traceparent}","baggage":"tenant=globex"`);
        // Dialect rules hold: 8.x integer ms, 7.x float seconds.
        const created = /"created_at":([0-9.]+)/.exec(raw)![1]!;
        expect(created.includes(".")).toBe(sk.target.version.startsWith("7"));

        const ruby = await sk.startSidekiq({
          queues: [queue],
          require: "lib/otel_jobs.rb",
          env: { ...env(), OTEL_SIDEKIQ_PROPAGATION: style },
        });
        try {
          const spans = await waitFor("Ruby's consumer span", async () => {
            const all = (await sk.redis.lrange("otel:spans", 0, -1)).map((s) => JSON.parse(s) as RubySpan);
            return all.some((s) => s.name === `${queue} process`) ? all : undefined;
          });
          const consumer = spans.find((s) => s.name === `${queue} process`)!;
          expect(consumer.kind).toBe("consumer");
          expect(consumer.attributes).toMatchObject({
            "messaging.system": "sidekiq",
            "messaging.message_id": jid,
            "messaging.destination": queue,
            "messaging.operation": "process",
          });
          if (style === "link") {
            expect(consumer.trace_id).not.toBe(publish.spanContext().traceId);
            expect(consumer.parent_span_id).toBeNull();
            expect(consumer.links).toEqual([
              { trace_id: publish.spanContext().traceId, span_id: publish.spanContext().spanId },
            ]);
          } else {
            expect(consumer.trace_id).toBe(publish.spanContext().traceId);
            expect(consumer.parent_span_id).toBe(publish.spanContext().spanId);
          }
          // Ruby ran the job with Node's bytes, context keys included.
          const received = await waitFor(
            "Ruby's RecordJob",
            async () => (await sk.redis.lrange("bridge:received", 0, -1))[0],
          );
          const job = (JSON.parse(received) as { job: Record<string, unknown> }).job;
          expect(job).toMatchObject({ jid, traceparent, baggage: "tenant=globex" });
        } finally {
          await ruby.stop();
        }
      });
    }

    it("a tracer whose exporter hangs or throws loses spans, never jobs", async () => {
      const hanging = new BasicTracerProvider({
        spanProcessors: [
          new SimpleSpanProcessor({ export: () => {}, shutdown: () => new Promise(() => {}) }),
          {
            onStart: () => {},
            onEnd: () => {
              throw new Error("exporter exploded");
            },
            forceFlush: async () => {},
            shutdown: async () => {},
          },
        ],
      });
      const queue = "otel-bad";
      const client = new Client({ redis: sk.url, dialect: sk.target.version });
      client.use(tracingClientMiddleware({ api, tracerProvider: hanging }));
      for (let i = 0; i < 200; i++) await client.push({ class: "RecordJob", queue, args: [i] });
      await client.close();
      let ran = 0;
      const w = new Worker({ redis: sk.url, dialect: sk.target.version, queues: [queue], concurrency: 5, timeout: 5 });
      w.use(tracingServerMiddleware({ api, tracerProvider: hanging }));
      w.register("RecordJob", () => void ran++);
      await w.start();
      try {
        await waitFor("200 jobs", async () => ran >= 200 || undefined);
      } finally {
        await w.stop();
      }
      expect(ran).toBe(200);
      expect(await sk.redis.zcard("retry")).toBe(0);
    });
  },
  // The OpenTelemetry Ruby SDK needs Ruby 3.3: trixie (7.3.2) and forky (8.1.7).
  (t) => t.version.startsWith("8") || t.version.startsWith("7"),
);
